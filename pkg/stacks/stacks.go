// Package stacks parses Go goroutine dumps into plain values.
//
// It reads the three forms served by net/http/pprof at /debug/pprof/goroutine:
//
//   - debug=2: one block per goroutine with its id, state, wait, frames and
//     creator (the form runtime.Stack(buf, true) prints). Scanner reads it in
//     one streaming pass and hands out one goroutine at a time, so a dump of
//     a million goroutines never sits in memory.
//   - debug=1: stacks aggregated by identical program counters, with a count
//     and no ids, states or waits (ParseDebug1).
//   - debug=0: the gzipped protobuf profile, read with
//     github.com/google/pprof/profile (ParseProfile); like debug=1 it carries
//     counts, not ids.
//
// The package knows nothing about Kubernetes. Format facts it relies on are
// those of the Go runtime (runtime/traceback.go, goroutineheader and
// traceback1 in Go 1.20 to 1.27).
package stacks

import (
	"fmt"
	"strings"
)

// Frame is one call in a stack, innermost first.
type Frame struct {
	// Func is the fully qualified function name as the runtime prints it,
	// e.g. "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process".
	Func string `json:"func"`
	// File is the source path as printed (module-relative with -trimpath).
	// Empty when Scanner.SkipFiles is set.
	File string `json:"file,omitempty"`
	// Line is the source line, 0 when unknown.
	Line int `json:"line,omitempty"`
	// Args is the raw argument text between the parentheses of a debug=2
	// frame ("0x24b5d7caf860, 0x24b5dd69f7c0", "..." for inlined calls).
	// Empty for debug=1 and protobuf input, and when Scanner.SkipArgs is set.
	Args string `json:"args,omitempty"`
}

// Goroutine is one goroutine of a debug=2 dump.
type Goroutine struct {
	// ID is the goroutine id (goid).
	ID int64 `json:"id"`
	// State is the wait reason or status without decorations: "select",
	// "chan receive", "IO wait", "running", "sync.Cond.Wait", ...
	State string `json:"state"`
	// WaitMinutes is the wait the runtime printed ("N minutes"), 0 when it
	// printed none (it does only from 1 minute on).
	//
	// It is approximate, and this is the one place that says why: it
	// resets whenever the goroutine runs (runtime/proc.go execute:
	// gp.waitsince = 0), and once a garbage collection sees the goroutine
	// parked it counts from the end of the collection before that one
	// (runtime/mgcmark.go markroot: waitsince = work.tstart, set at each
	// mark termination in mgc.go gcMark). A fresh block can thus print
	// "1 minutes": the value overstates by up to one interval between
	// collections (at most about forcegcperiod, 2 minutes, runtime/proc.go),
	// and a long block not yet seen by a collection prints nothing.
	WaitMinutes int `json:"waitMinutes,omitempty"`
	// LockedToThread is set for goroutines wired to their OS thread.
	LockedToThread bool `json:"lockedToThread,omitempty"`
	// Flags holds any other decoration of the header, verbatim: "scan",
	// "durable", "leaked", "synctest bubble 3".
	Flags []string `json:"flags,omitempty"`
	// Labels are pprof labels printed with GODEBUG=tracebacklabels=1.
	Labels map[string]string `json:"labels,omitempty"`
	// Frames are the calls, innermost first.
	Frames []Frame `json:"frames"`
	// FramesElided is set when the runtime cut the stack
	// ("...additional frames elided...").
	FramesElided bool `json:"framesElided,omitempty"`
	// StackUnavailable is set when the runtime could not print the stack
	// ("goroutine running on other thread; stack unavailable").
	StackUnavailable bool `json:"stackUnavailable,omitempty"`
	// CreatedBy is the go statement that started this goroutine; Func is
	// empty for goroutine 1 and for runtime goroutines.
	CreatedBy Frame `json:"createdBy,omitempty"`
	// ParentID is the goroutine that ran the go statement ("created by X in
	// goroutine N", Go >= 1.21). 0 when the dump does not say.
	ParentID int64 `json:"parentID,omitempty"`
	// Line is the line of the header in the dump, for messages.
	Line int `json:"line"`
}

// Clone returns a deep copy that stays valid after the Scanner moves on.
func (g *Goroutine) Clone() *Goroutine {
	c := *g
	c.Frames = append([]Frame(nil), g.Frames...)
	c.Flags = append([]string(nil), g.Flags...)
	if g.Labels != nil {
		c.Labels = make(map[string]string, len(g.Labels))
		for k, v := range g.Labels {
			c.Labels[k] = v
		}
	}
	return &c
}

// TopFunc returns the innermost frame's function that is not part of the
// Go scheduler's parking machinery (runtime.gopark, runtime.selectgo, ...),
// which debug=2 dumps show only at GOTRACEBACK=system and above.
func TopFunc(frames []Frame) string {
	for _, f := range frames {
		if !isParkingFrame(f.Func) {
			return f.Func
		}
	}
	if len(frames) > 0 {
		return frames[0].Func
	}
	return ""
}

// isParkingFrame reports whether fn is a runtime function a blocked
// goroutine sits in below its caller's blocking statement.
func isParkingFrame(fn string) bool {
	if !strings.HasPrefix(fn, "runtime.") {
		return false
	}
	switch fn {
	case "runtime.gopark", "runtime.goparkunlock", "runtime.selectgo", "runtime.block",
		"runtime.chanrecv", "runtime.chanrecv1", "runtime.chanrecv2", "runtime.chansend",
		"runtime.chansend1", "runtime.semacquire1", "runtime.notetsleepg",
		"runtime.netpollblock", "runtime.goschedIfBusy":
		return true
	}
	return false
}

// Stack is one aggregated stack of a debug=1 or protobuf dump: Count
// goroutines share exactly these frames. Ids, states and waits are not
// recorded in those formats.
type Stack struct {
	Count  int               `json:"count"`
	Frames []Frame           `json:"frames"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Skipped is an input line a parser did not understand and left out.
type Skipped struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

func (s Skipped) String() string {
	return fmt.Sprintf("line %d: %s: %q", s.Line, s.Reason, s.Text)
}

// maxSkippedKept bounds how many skipped lines are remembered verbatim; all
// of them are counted.
const maxSkippedKept = 20

// skipLog records skipped lines: the first few verbatim, all of them counted.
type skipLog struct {
	kept  []Skipped
	count int
}

func (l *skipLog) add(line int, text []byte, reason string) {
	l.count++
	if len(l.kept) < maxSkippedKept {
		const maxText = 120
		t := string(text)
		if len(t) > maxText {
			t = t[:maxText] + "..."
		}
		l.kept = append(l.kept, Skipped{Line: line, Text: strings.ToValidUTF8(t, "?"), Reason: reason})
	}
}

// SyntaxError is a fatal problem at one line of the input.
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
