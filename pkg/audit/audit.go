// Package audit reads kube-apiserver audit logs: JSON lines of
// audit.k8s.io/v1 Event, as the log backend writes them with
// --audit-log-path and the default --audit-log-format=json (k8s.io/apiserver
// v0.37.2 plugin/pkg/audit/log/backend.go:70-90, one encoded event per
// line; the legacy text format is not read), plain or gzipped. It keeps the watch
// requests only, one per auditID (a request logs one event per stage),
// with what names their client: user, request URI, source addresses, user
// agent and when the server received the request. Reads are bounded and a
// line that is not an event is listed, never guessed at.
package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
)

// Limits bound a read.
type Limits struct {
	// Bytes is the most the log may hold, counted after decompression.
	Bytes int64
	// Line is the longest line read; a longer one is skipped (listed).
	Line int
	// Watches is the most watch requests kept; more is an error.
	Watches int
}

// DefaultLimits fit a day of a busy server's audit log at Metadata level
// (an event is about 1 KiB): 1 GiB, lines of 1 MiB (RequestResponse
// events carry bodies), a million watch requests.
func DefaultLimits() Limits { return Limits{Bytes: 1 << 30, Line: 1 << 20, Watches: 1_000_000} }

// Event is one watch request of the log.
type Event struct {
	// Source is the log's name as Read was given it; Line is the line of
	// the request's first event in it.
	Source  string
	Line    int
	AuditID string
	User    string
	Verb    string
	// RequestURI is as logged; Path is its path, query removed.
	RequestURI, Path string
	SourceIPs        []string
	UserAgent        string
	// RequestReceived is requestReceivedTimestamp: when the server
	// received the request, before API Priority and Fairness admitted it.
	RequestReceived time.Time
}

// Skipped is a line that is not a readable audit event.
type Skipped struct {
	Line   int
	Reason string
}

// Log is what one audit log holds.
type Log struct {
	// Events are the watch requests, in the order of their first line.
	Events  []Event
	Skipped []Skipped
	// Lines counts the lines read, Others the events of other verbs.
	Lines, Others int
}

// event is the part of an audit.k8s.io/v1 Event read here
// (k8s.io/apiserver v0.37.2 pkg/apis/audit/v1/types.go:72-133).
type event struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	AuditID    string `json:"auditID"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	SourceIPs                []string  `json:"sourceIPs"`
	UserAgent                string    `json:"userAgent"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// Read reads an audit log from r; name is for messages. A log larger than
// limits.Bytes, or with more watch requests than limits.Watches, is an
// error naming it; a gzip stream is read by its magic bytes.
func Read(r io.Reader, name string, limits Limits) (*Log, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	lr := bufio.NewReaderSize(bounded.NewReader(br, limits.Bytes, name, "an audit log"), 64<<10)
	out := &Log{}
	seen := map[string]int{}
	for {
		line, tooLong, err := readLine(lr, limits.Line)
		if len(line) > 0 || tooLong {
			out.Lines++
			if tooLong {
				out.Skipped = append(out.Skipped, Skipped{Line: out.Lines, Reason: fmt.Sprintf("longer than %d bytes", limits.Line)})
			} else if err := out.add(line, name, seen, limits); err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", name, out.Lines, err)
			}
		} else if err == nil {
			out.Lines++ // an empty line
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}

// errTooMany is a log with more watch requests than its bound.
var errTooMany = errors.New("more watch requests than the bound")

// add reads one line into the log.
func (l *Log) add(line []byte, name string, seen map[string]int, limits Limits) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		l.Skipped = append(l.Skipped, Skipped{Line: l.Lines, Reason: "not JSON: " + err.Error()})
		return nil
	}
	if e.Kind != "Event" || e.APIVersion != "audit.k8s.io/v1" {
		l.Skipped = append(l.Skipped, Skipped{Line: l.Lines, Reason: fmt.Sprintf("kind %q, apiVersion %q: not an audit.k8s.io/v1 Event", e.Kind, e.APIVersion)})
		return nil
	}
	if e.Verb != "watch" {
		l.Others++
		return nil
	}
	if i, ok := seen[e.AuditID]; ok && e.AuditID != "" {
		// Another stage of the same request: fill what it lacked.
		ev := &l.Events[i]
		if ev.UserAgent == "" {
			ev.UserAgent = e.UserAgent
		}
		if len(ev.SourceIPs) == 0 {
			ev.SourceIPs = e.SourceIPs
		}
		return nil
	}
	if len(l.Events) >= limits.Watches {
		return fmt.Errorf("%w (%d)", errTooMany, limits.Watches)
	}
	path := e.RequestURI
	if u, err := url.ParseRequestURI(e.RequestURI); err == nil {
		path = u.Path
	}
	seen[e.AuditID] = len(l.Events)
	l.Events = append(l.Events, Event{
		Source: name, Line: l.Lines, AuditID: e.AuditID, User: e.User.Username, Verb: e.Verb, RequestURI: e.RequestURI, Path: path,
		SourceIPs: e.SourceIPs, UserAgent: e.UserAgent, RequestReceived: e.RequestReceivedTimestamp,
	})
	return nil
}

// readLine reads one line of at most max bytes (without its newline); a
// longer one is consumed and reported tooLong. err is io.EOF at the end.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}
