package audit

import (
	"bytes"
	"fmt"
)

// The forms read, as Summary.Format and UnknownFormatError name them.
const (
	formatUpstream   = "kube-apiserver JSON lines (audit.k8s.io/v1 Event; also OpenShift's oc adm node-logs, CloudWatch messages one per line)"
	formatGKEArray   = "GKE Cloud Logging LogEntry array (gcloud logging read, JSON format)"
	formatGKELines   = "GKE Cloud Logging LogEntry JSON lines (a log sink's files)"
	formatCloudWatch = "EKS CloudWatch Logs events (aws logs filter-log-events or get-log-events JSON, Logs Insights @message)"
	formatTail       = "EKS CloudWatch Logs lines (aws logs tail: time, stream, event)"
	formatAKSRecords = "AKS diagnostic setting records (kube-audit, kube-audit-admin; storage account or event hub)"
	formatAKSRows    = "AKS Log Analytics rows (AKSAudit, AKSAuditAdmin; az monitor log-analytics query)"
)

// Formats are the forms Scan reads, a new slice each call.
func Formats() []string {
	return []string{formatUpstream, formatGKEArray, formatGKELines, formatCloudWatch, formatTail, formatAKSRecords, formatAKSRows}
}

// lacks says, per form, what it does not carry that a join uses.
var lacks = map[string][]string{
	formatGKEArray: gkeLacks,
	formatGKELines: gkeLacks,
}

// GKE's resourceName is the object's path without the request's query,
// and its entries carry no requestReceivedTimestamp or HTTP status.
var gkeLacks = []string{
	"the request URI's query (timeoutSeconds, sendInitialEvents, resourceVersion): the path is rebuilt from resourceName",
	"requestReceivedTimestamp: the timestamp of the request's first entry (operation.first) stands for it",
	"the HTTP status code",
}

// member returns the raw value of key in the object v, nil when absent.
func member(v []byte, key string) []byte {
	var out []byte
	_ = members(v, func(k, val []byte) bool {
		if string(k) == key {
			out = val
			return false
		}
		return true
	})
	return out
}

// gke reads a Cloud Logging LogEntry whose protoPayload is a Kubernetes
// AuditLog: methodName io.k8s.<group>.<version>.<resource>.<verb>,
// resourceName <group>/<version>/[namespaces/<ns>/]<resource>[/<name>],
// operation.id the audit ID, operation.first and .last the request's
// first and last entries.
func (d *decoder) gke(f *fields) (reason string) {
	p := f[kProtoPayload]
	typ := d.str(member(p, "@type"))
	if !bytes.HasSuffix(typ, []byte("google.cloud.audit.AuditLog")) {
		return fmt.Sprintf("protoPayload @type %q: not an AuditLog", typ)
	}
	method := d.str(member(p, "methodName"))
	if !bytes.HasPrefix(method, []byte("io.k8s.")) {
		return fmt.Sprintf("methodName %q: not a Kubernetes API request", method)
	}
	r := &d.r
	if i := bytes.LastIndexByte(method, '.'); i >= 0 {
		r.verb = method[i+1:]
	}
	if string(r.verb) != "watch" {
		return ""
	}
	r.user = d.str(member(member(p, "authenticationInfo"), "principalEmail"))
	meta := member(p, "requestMetadata")
	if ip := d.str(member(meta, "callerIp")); ip != nil {
		d.ips = append(d.ips, ip)
		r.sourceIPs = d.ips
	}
	r.userAgent = d.str(member(meta, "callerSuppliedUserAgent"))
	r.path = gkePath(d, d.str(member(p, "resourceName")))
	r.uri = r.path
	ts, _ := parseTime(d.str(f[kTimestamp]))
	r.stageTime = ts
	op := f[kOperation]
	r.auditID = d.str(member(op, "id"))
	r.start = op == nil || string(member(op, "first")) == "true"
	r.end = op == nil || string(member(op, "last")) == "true"
	if r.start {
		r.received = ts
	}
	return ""
}

// gkePath rebuilds a request path from a resourceName: core/v1/... is
// under /api, any other group under /apis.
func gkePath(d *decoder, name []byte) []byte {
	if len(name) == 0 {
		return nil
	}
	start := len(d.buf)
	if bytes.HasPrefix(name, []byte("core/")) {
		d.buf = append(d.buf, "/api/"...)
		d.buf = append(d.buf, name[len("core/"):]...)
	} else {
		d.buf = append(d.buf, "/apis/"...)
		d.buf = append(d.buf, name...)
	}
	return d.buf[start:len(d.buf):len(d.buf)]
}

// aksRecord reads a diagnostic setting's record: properties.log holds
// the event as JSON text.
func (d *decoder) aksRecord(props []byte) (reason string) {
	log := member(props, "log")
	if log == nil {
		return "properties holds no log"
	}
	return d.message(log)
}

// aksRow reads a Log Analytics row of AKSAudit or AKSAuditAdmin. Its
// dynamic columns (User, SourceIps, ResponseStatus) come as JSON values
// or as JSON text in a string, depending on the client.
func (d *decoder) aksRow(f *fields) (reason string) {
	r := &d.r
	r.verb = d.str(f[kAKSVerb])
	if string(r.verb) != "watch" {
		return ""
	}
	r.auditID, r.uri, r.userAgent = d.str(f[kAKSAuditID]), d.str(f[kAKSRequestURI]), d.str(f[kAKSUserAgent])
	r.user = d.str(member(d.dynamic(f[kAKSUser]), "username"))
	d.sourceIPs(d.dynamic(f[kAKSSourceIPs]))
	r.received, _ = parseTime(d.str(f[kAKSReceived]))
	r.stageTime, _ = parseTime(d.str(f[kAKSStageTime]))
	stage := d.str(f[kAKSStage])
	r.start = true
	r.end = string(stage) == "ResponseComplete" || string(stage) == "Panic"
	r.code = httpCode(member(d.dynamic(f[kAKSResponseStatus]), "code"))
	return ""
}

// dynamic returns a dynamic column's JSON value: v itself, or the JSON
// text a string v holds.
func (d *decoder) dynamic(v []byte) []byte {
	if len(v) == 0 || v[0] != '"' {
		return v
	}
	return d.str(v)
}
