package audit

import (
	"bytes"
	"fmt"
	"time"
)

// rec is one record of a log as a format's reader decoded it: one stage
// of one request. Its byte slices alias the reader's buffers until
// merged.
type rec struct {
	line                                int
	auditID, user, verb, uri, userAgent []byte
	sourceIPs                           [][]byte
	received, stageTime                 time.Time
	start, end                          bool // the record shows when the request started, when it ended
	code                                int
	// path, when set, is the request's path as the format gives it
	// without a query (GKE's resourceName, rebuilt).
	path []byte
}

// The members any form's record may have that are read here: the
// upstream Event's (k8s.io/apiserver v0.37.2
// pkg/apis/audit/v1/types.go:72-133), GKE's LogEntry's, CloudWatch's,
// and AKS's (testdata/README.md lists the documents).
const (
	kKind = iota
	kAPIVersion
	kAuditID
	kStage
	kVerb
	kRequestURI
	kUser
	kSourceIPs
	kUserAgent
	kReceived
	kStageTime
	kResponseStatus
	kProtoPayload
	kOperation
	kTimestamp
	kMessage
	kProperties
	kRecords
	kEvents
	kAKSRequestURI
	kAKSVerb
	kAKSUser
	kAKSSourceIPs
	kAKSUserAgent
	kAKSAuditID
	kAKSReceived
	kAKSStageTime
	kAKSStage
	kAKSResponseStatus
	nKeys
)

func keyIndex(k []byte) int {
	switch string(k) {
	case "kind":
		return kKind
	case "apiVersion":
		return kAPIVersion
	case "auditID":
		return kAuditID
	case "stage":
		return kStage
	case "verb":
		return kVerb
	case "requestURI":
		return kRequestURI
	case "user":
		return kUser
	case "sourceIPs":
		return kSourceIPs
	case "userAgent":
		return kUserAgent
	case "requestReceivedTimestamp":
		return kReceived
	case "stageTimestamp":
		return kStageTime
	case "responseStatus":
		return kResponseStatus
	case "protoPayload":
		return kProtoPayload
	case "operation":
		return kOperation
	case "timestamp", "@timestamp":
		return kTimestamp
	case "message", "@message":
		return kMessage
	case "properties":
		return kProperties
	case "records":
		return kRecords
	case "events":
		return kEvents
	case "RequestUri":
		return kAKSRequestURI
	case "Verb":
		return kAKSVerb
	case "User":
		return kAKSUser
	case "SourceIps":
		return kAKSSourceIPs
	case "UserAgent":
		return kAKSUserAgent
	case "AuditId":
		return kAKSAuditID
	case "RequestReceivedTime":
		return kAKSReceived
	case "StageReceivedTime", "StageTimestamp":
		return kAKSStageTime
	case "Stage":
		return kAKSStage
	case "ResponseStatus":
		return kAKSResponseStatus
	}
	return -1
}

// fields are the raw values of one object's members read here.
type fields [nKeys][]byte

func (f *fields) read(b []byte) error {
	*f = fields{}
	return members(b, func(k, v []byte) bool {
		if i := keyIndex(k); i >= 0 {
			f[i] = v
		}
		return true
	})
}

// decoder decodes records. Its buffers are reused from record to record;
// a rec it returns is valid until the next. Not safe for concurrent use.
type decoder struct {
	f, inner fields
	// buf holds unescaped strings; msg an unescaped message holding an
	// event.
	buf, msg []byte
	ips      [][]byte
	r        rec
}

// reasonWrapper is an object that wraps records in an array.
const reasonWrapper = "an object wrapping records"

// where is where a record was found, for the format's name.
type where int

const (
	inLines where = iota
	inArray
	inWrapper
)

// object reads one record: r is nil (and reason says why) when b is not
// an audit event of a form read here. format is the form recognised.
func (d *decoder) object(b []byte, line int, in where) (r *rec, format, reason string) {
	if err := d.f.read(b); err != nil {
		return nil, "", "not a JSON object: " + err.Error()
	}
	f := &d.f
	d.buf, d.ips = d.buf[:0], d.ips[:0]
	if cap(d.buf) < len(b) {
		d.buf = make([]byte, 0, len(b)) // unescaped strings are never longer: slices of buf stay valid
	}
	d.r = rec{line: line}
	switch {
	case f[kKind] != nil || f[kAPIVersion] != nil:
		if reason := d.upstream(f); reason != "" {
			return nil, "", reason
		}
		return &d.r, formatUpstream, ""
	case f[kProtoPayload] != nil:
		if reason := d.gke(f); reason != "" {
			return nil, "", reason
		}
		if in == inLines {
			return &d.r, formatGKELines, ""
		}
		return &d.r, formatGKEArray, ""
	case f[kMessage] != nil:
		reason := d.message(f[kMessage])
		if reason != "" {
			return nil, "", reason
		}
		return &d.r, formatCloudWatch, ""
	case f[kProperties] != nil:
		if reason := d.aksRecord(f[kProperties]); reason != "" {
			return nil, "", reason
		}
		return &d.r, formatAKSRecords, ""
	case f[kAKSRequestURI] != nil || f[kAKSAuditID] != nil:
		if reason := d.aksRow(f); reason != "" {
			return nil, "", reason
		}
		return &d.r, formatAKSRows, ""
	case f[kRecords] != nil || f[kEvents] != nil:
		return nil, "", reasonWrapper
	}
	return nil, "", "an object of no audit form read here"
}

// str unescapes the raw JSON string v into d.buf; nil when v is absent
// or not a string.
func (d *decoder) str(v []byte) []byte {
	if len(v) == 0 {
		return nil
	}
	start := len(d.buf)
	buf, ok := unquote(d.buf, v)
	if !ok {
		d.buf = d.buf[:start]
		return nil
	}
	d.buf = buf
	return buf[start:len(buf):len(buf)]
}

// upstream reads the record of an audit.k8s.io/v1 Event.
func (d *decoder) upstream(f *fields) (reason string) {
	kind, apiVersion := d.str(f[kKind]), d.str(f[kAPIVersion])
	if string(kind) != "Event" || string(apiVersion) != "audit.k8s.io/v1" {
		return fmt.Sprintf("kind %q, apiVersion %q: not an audit.k8s.io/v1 Event", kind, apiVersion)
	}
	r := &d.r
	r.verb = d.str(f[kVerb])
	if string(r.verb) != "watch" {
		return ""
	}
	r.auditID, r.uri, r.userAgent = d.str(f[kAuditID]), d.str(f[kRequestURI]), d.str(f[kUserAgent])
	if u := f[kUser]; u != nil {
		_ = members(u, func(k, v []byte) bool {
			if string(k) == "username" {
				r.user = d.str(v)
				return false
			}
			return true
		})
	}
	d.sourceIPs(f[kSourceIPs])
	r.received, _ = parseTime(d.str(f[kReceived]))
	r.stageTime, _ = parseTime(d.str(f[kStageTime]))
	stage := d.str(f[kStage])
	r.start = true // every stage carries requestReceivedTimestamp
	r.end = string(stage) == "ResponseComplete" || string(stage) == "Panic"
	if s := f[kResponseStatus]; s != nil {
		_ = members(s, func(k, v []byte) bool {
			if string(k) == "code" {
				r.code = httpCode(v)
				return false
			}
			return true
		})
	}
	return ""
}

// httpCode reads an HTTP status code: 0 unless an integer from 100 to
// 599.
func httpCode(v []byte) int {
	if n, ok := jsonInt(v); ok && n >= 100 && n <= 599 {
		return n
	}
	return 0
}

// sourceIPs reads an array of address strings into d.r.sourceIPs.
func (d *decoder) sourceIPs(v []byte) {
	if v == nil {
		return
	}
	_ = elements(v, func(e []byte) {
		if s := d.str(e); s != nil && len(d.ips) < maxSourceIPs {
			d.ips = append(d.ips, s)
		}
	})
	d.r.sourceIPs = d.ips
}

// maxSourceIPs bounds the addresses kept of one request (the client and
// the proxies on its way).
const maxSourceIPs = 16

// message reads an event held as JSON text in a string (CloudWatch's
// message, AKS's properties.log).
func (d *decoder) message(v []byte) (reason string) {
	var ok bool
	if d.msg, ok = unquote(d.msg[:0], v); !ok {
		return "the message is not a string"
	}
	if err := d.inner.read(d.msg); err != nil {
		return "the message is not a JSON object: " + err.Error()
	}
	if cap(d.buf)-len(d.buf) < len(d.msg) {
		d.buf = make([]byte, 0, len(d.msg)+cap(d.buf))
	}
	return d.upstream(&d.inner)
}

// isWatch reports a watch request's record.
func (r *rec) isWatch() bool { return bytes.Equal(r.verb, []byte("watch")) }
