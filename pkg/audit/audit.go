// Package audit reads kube-apiserver audit logs in the forms a user can
// download them, each recognised by its content, never by its name:
//   - the server's own JSON lines of audit.k8s.io/v1 Event, as the log
//     backend writes them with --audit-log-path and the default
//     --audit-log-format=json (k8s.io/apiserver v0.37.2
//     plugin/pkg/audit/log/backend.go:70-90, one encoded event per line;
//     the legacy text format is not read), plain or gzipped, also as
//     OpenShift's `oc adm node-logs` prints them;
//
// It keeps the watch requests only, one per auditID (a request logs one
// event per stage, merged here), with what names their client: user,
// request URI, source addresses, user agent, when the server received the
// request and when it ended. Reads are bounded and a record that is not an
// event is counted (the first few listed), never guessed at; a file in no
// known format is an *UnknownFormatError.
package audit

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Limits bound a read.
type Limits struct {
	// Bytes is the most the log may hold, counted after decompression.
	Bytes int64
	// Line is the longest line (or element of a JSON array) read; a
	// longer one is skipped (counted).
	Line int
	// Watches is the most watch requests kept; more is an error.
	Watches int
	// Records is the most lines (or array elements) read; more is an
	// error.
	Records int
}

// DefaultLimits fit a day of a busy server's audit log at Metadata level
// (an event is about 1 KiB): 1 GiB, lines of 1 MiB (RequestResponse
// events carry bodies), a million watch requests, 20 million records.
var DefaultLimits = Limits{Bytes: 1 << 30, Line: 1 << 20, Watches: 1_000_000, Records: 20_000_000}

// MaxSkippedKept is how many skipped records a Summary lists; the rest
// are counted.
const MaxSkippedKept = 20

// Event is one watch request of the log, its stages merged. Its strings
// and SourceIPs may be shared with other events of the same read: do not
// modify them.
type Event struct {
	// Source is the log's name as Scan was given it; Line is the line of
	// the request's first record in it.
	Source  string
	Line    int
	AuditID string
	User    string
	Verb    string
	// RequestURI is as logged (a provider that logs no query string
	// gives the path alone); Path is its path, query removed.
	RequestURI, Path string
	SourceIPs        []string
	UserAgent        string
	// RequestReceived is requestReceivedTimestamp: when the server
	// received the request, before API Priority and Fairness admitted it.
	RequestReceived time.Time
	// Completed is when the request ended (the ResponseComplete or Panic
	// stage's stageTimestamp, or the provider's equivalent); zero when the
	// log does not say.
	Completed time.Time
	// TimeoutSeconds is the request URI's timeoutSeconds, 0 when absent.
	TimeoutSeconds int
	// Code is the response's status code, 0 when the log does not say.
	Code int
}

// Skipped is a record that is not a readable audit event.
type Skipped struct {
	Line   int
	Reason string
}

// Summary is what a read of one log saw.
type Summary struct {
	// Name is the log's name as Scan was given it.
	Name string
	// Format is the form recognised, e.g. "kube-apiserver JSON lines".
	Format string
	// Lacks names what the format does not carry that the upstream
	// event does (e.g. "the request URI's query"), so a join can say what
	// it rests on; empty for the upstream format.
	Lacks []string
	// Lines counts the lines read, Records the records (lines, or array
	// elements), Others the events of other verbs, Watches the watch
	// requests.
	Lines, Records, Others, Watches int
	// SkippedCount counts the records skipped; Skipped lists the first
	// MaxSkippedKept of them.
	SkippedCount int
	Skipped      []Skipped
}

// skip counts a skipped record, keeping the first MaxSkippedKept.
func (s *Summary) skip(line int, reason string) {
	s.SkippedCount++
	if len(s.Skipped) < MaxSkippedKept {
		s.Skipped = append(s.Skipped, Skipped{Line: line, Reason: reason})
	}
}

// Log is what one audit log holds.
type Log struct {
	Summary
	// Events are the watch requests, in the order of their first line.
	Events []Event
}

// UnknownFormatError is a log in none of the forms read.
type UnknownFormatError struct {
	Name string
	// Formats are the forms read.
	Formats []string
	// First are the first bytes seen (after decompression).
	First []byte
}

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("%s is in no audit log format read here (%s); it starts %s", e.Name, strings.Join(e.Formats, "; "), strconv.QuoteToASCII(string(e.First)))
}

// Read reads a log whole: Scan, collecting the events in the order of
// their first line.
func Read(ctx context.Context, r io.Reader, name string, limits Limits) (*Log, error) {
	out := &Log{}
	s, err := Scan(ctx, r, name, limits, func(e *Event) error {
		out.Events = append(out.Events, *e)
		return nil
	})
	if s != nil {
		out.Summary = *s
	}
	if err != nil {
		return nil, err
	}
	sortByLine(out.Events)
	return out, nil
}
