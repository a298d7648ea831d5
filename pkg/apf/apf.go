// Package apf parses the API Priority and Fairness debug dumps of
// kube-apiserver:
//
//   - /debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1
//     (ParseRequests): one row per queued or executing request, with the
//     user, verb, path, namespace and resource when details are included;
//   - /debug/api_priority_and_fairness/dump_priority_levels
//     (ParsePriorityLevels): one row per priority level.
//
// Both are written by k8s.io/apiserver pkg/util/flowcontrol/
// apf_controller_debug.go (v0.37.2: dumpRequests at line 141,
// dumpPriorityLevels at line 50) as comma-separated columns aligned by a
// text/tabwriter. Columns are read by header name, so dumps from releases
// with fewer columns parse too.
package apf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Request is one row of dump_requests.
type Request struct {
	PriorityLevel string `json:"priorityLevel"`
	FlowSchema    string `json:"flowSchema"`
	// QueueIndex is -1 for requests that never queued (exempt levels).
	QueueIndex int `json:"queueIndex"`
	// IndexInQueue is -1 for executing requests; 0.. for waiting ones
	// (apf_controller_debug.go:205, dumpRequest(iq, -1, r) for executing).
	IndexInQueue      int           `json:"indexInQueue"`
	FlowDistinguisher string        `json:"flowDistinguisher,omitempty"`
	ArriveTime        time.Time     `json:"arriveTime"`
	InitialSeats      int           `json:"initialSeats"`
	FinalSeats        int           `json:"finalSeats"`
	AdditionalLatency time.Duration `json:"additionalLatency,omitempty"`
	// StartTime is when the request began executing; zero while waiting.
	StartTime time.Time `json:"startTime"`

	// Details, present with includeRequestDetails=1.
	User        string `json:"user,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Path        string `json:"path,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`

	// Line is the row's line in the dump.
	Line int `json:"line"`
}

// Executing reports whether the request holds its seats (it is not
// waiting in a queue).
func (r Request) Executing() bool { return r.IndexInQueue < 0 }

// Seats is the number of seats the request occupies while executing.
func (r Request) Seats() int { return r.InitialSeats }

// Requests is a parsed dump_requests.
type Requests struct {
	// HasDetails is set when the dump was fetched with
	// includeRequestDetails=1 and so names users, verbs and paths.
	HasDetails bool      `json:"hasDetails"`
	Requests   []Request `json:"requests"`
	// SkippedRows counts the rows that could not be read (a cell that is
	// not a number, a negative count, a bad time, the wrong number of
	// cells); Skipped keeps the first MaxSkippedKept of them, with their
	// lines.
	SkippedRows int       `json:"skippedRows,omitempty"`
	Skipped     []Skipped `json:"skipped,omitempty"`
}

// MaxSkippedKept is how many skipped rows Requests.Skipped keeps: enough
// to show what went wrong, bounded whatever the dump holds.
const MaxSkippedKept = 20

// SkippedCount is how many rows were skipped: SkippedRows, or the rows
// Skipped lists when the Requests were built without counting them.
func (r *Requests) SkippedCount() int { return max(r.SkippedRows, len(r.Skipped)) }

// PriorityLevel is one row of dump_priority_levels.
type PriorityLevel struct {
	Name               string `json:"name"`
	ActiveQueues       int    `json:"activeQueues"`
	IsIdle             bool   `json:"isIdle"`
	IsQuiescing        bool   `json:"isQuiescing"`
	WaitingRequests    int    `json:"waitingRequests"`
	ExecutingRequests  int    `json:"executingRequests"`
	DispatchedRequests int    `json:"dispatchedRequests"`
	RejectedRequests   int    `json:"rejectedRequests"`
	TimedoutRequests   int    `json:"timedoutRequests"`
	CancelledRequests  int    `json:"cancelledRequests"`
	Line               int    `json:"line"`
}

// Skipped is a row left out, with the reason.
type Skipped struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// SyntaxError is a fatal problem at one line of a dump.
type SyntaxError struct {
	LineNo int // 1-based
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.LineNo, e.Msg) }

// Line is the 1-based line the error is about. Every parser's syntax
// error has it (stacks, apf, metrics), so a caller names the line of any.
func (e *SyntaxError) Line() int { return e.LineNo }

// Reason is the problem, without the line.
func (e *SyntaxError) Reason() string { return e.Msg }

// maxLine bounds a row; real rows are a few hundred bytes.
const maxLine = 64 << 10

// maxRows bounds a dump; a real server holds at most a few thousand
// requests in flight (queues are bounded by the priority levels' queue
// lengths and concurrency shares).
const maxRows = 100_000

// RequestsHeader and PriorityLevelsHeader are the first header cells that
// identify each dump.
const (
	RequestsHeader       = "PriorityLevelName, FlowSchemaName"
	PriorityLevelsHeader = "PriorityLevelName, ActiveQueues"
)

type rows struct {
	sc   *bufio.Scanner
	line int
}

func newRows(r io.Reader) *rows {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &rows{sc: sc}
}

// next returns the cells of the next non-empty line, trimmed, and the
// same cells untrimmed (to rebuild values that held a comma).
func (r *rows) next() ([]string, bool, error) {
	cells, _, ok, err := r.nextRaw()
	return cells, ok, err
}

func (r *rows) nextRaw() ([]string, []string, bool, error) {
	for r.sc.Scan() {
		r.line++
		line := bytes.TrimRight(r.sc.Bytes(), "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return nil, nil, false, &SyntaxError{LineNo: r.line, Msg: "binary data (NUL byte): not an APF dump"}
		}
		if r.line > maxRows {
			return nil, nil, false, &SyntaxError{LineNo: r.line, Msg: fmt.Sprintf("more than %d rows: not an APF dump", maxRows)}
		}
		raw := strings.Split(string(line), ",")
		cells := make([]string, len(raw))
		for i := range raw {
			cells[i] = strings.TrimSpace(raw[i])
		}
		return cells, raw, true, nil
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, false, &SyntaxError{LineNo: r.line + 1, Msg: fmt.Sprintf("line is longer than %d bytes: not an APF dump", maxLine)}
		}
		return nil, nil, false, fmt.Errorf("reading line %d: %w", r.line+1, err)
	}
	return nil, nil, false, nil
}

func headerIndex(cells []string) map[string]int {
	idx := make(map[string]int, len(cells))
	for i, c := range cells {
		idx[c] = i
	}
	return idx
}

func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}
