package stacks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScannerReuseAndClone checks the documented lifetime: Goroutine() is
// overwritten by Next, Clone is not.
func TestScannerReuseAndClone(t *testing.T) {
	a := gDump{header: gHeader{id: 1, status: "select", scan: true, labels: [][2]string{{"a", "1"}}}, frames: []gFrame{frameSend, frameInterval}, creator: creatorWatch}
	b := gDump{header: gHeader{id: 2, status: "chan receive", leaked: true, labels: [][2]string{{"b", "2"}}}, frames: []gFrame{framePark}}
	// A last goroutine without "created by" would read as cut.
	last := gDump{header: gHeader{id: 3, status: "select"}, frames: []gFrame{framePark}, creator: creatorWatch}
	sc := NewScanner(strings.NewReader(debug2(a, b, last)))
	if !sc.Next() {
		t.Fatalf("Next: %v", sc.Err())
	}
	first := sc.Goroutine().Clone()
	snapshot := sc.Goroutine().Clone()
	if diff := cmp.Diff(snapshot, first); diff != "" {
		t.Fatalf("Clone differs from the original (-orig +clone):\n%s", diff)
	}
	if !sc.Next() {
		t.Fatalf("Next: %v", sc.Err())
	}
	if diff := cmp.Diff(snapshot, first); diff != "" {
		t.Errorf("Next changed a clone (-before +after):\n%s", diff)
	}
	second := sc.Goroutine()
	if second.ID != 2 || len(second.Frames) != 1 || second.Labels["b"] != "2" || second.Labels["a"] != "" || second.CreatedBy != (Frame{}) {
		t.Errorf("second goroutine carries state of the first: %+v", second)
	}
	// Mutating a clone leaves the scanner's goroutine alone.
	c := second.Clone()
	c.Frames[0].Func, c.Flags[0], c.Labels["b"] = "x", "x", "x"
	if second.Frames[0].Func != framePark.fn || second.Flags[0] != "leaked" || second.Labels["b"] != "2" {
		t.Errorf("mutating a clone changed the original: %+v", second)
	}
	var empty Goroutine
	if diff := cmp.Diff(&empty, empty.Clone()); diff != "" {
		t.Errorf("Clone of the zero Goroutine (-want +got):\n%s", diff)
	}
}

func TestTopFunc(t *testing.T) {
	f := func(names ...string) []Frame {
		out := make([]Frame, len(names))
		for i, n := range names {
			out[i] = Frame{Func: n}
		}
		return out
	}
	tests := []struct {
		name   string
		frames []Frame
		want   string
	}{
		{"empty", nil, ""},
		{"user frame first", f("pkg.f", "pkg.g"), "pkg.f"},
		{"select parking", f("runtime.gopark", "runtime.selectgo", frameSend.fn, frameInterval.fn), frameSend.fn},
		{"chan receive parking", f("runtime.gopark", "runtime.chanrecv", "runtime.chanrecv1", "pkg.wait"), "pkg.wait"},
		{"semaphore parking", f("runtime.gopark", "runtime.goparkunlock", "runtime.semacquire1", "sync.runtime_SemacquireMutex", "sync.(*Mutex).lockSlow"), "sync.runtime_SemacquireMutex"},
		{"other runtime functions count", f("runtime.gopark", "runtime.netpollblock", "internal/poll.runtime_pollWait"), "internal/poll.runtime_pollWait"},
		{"runtime non-parking frame", f("runtime.gopark", "runtime.gcBgMarkWorker", "runtime.goexit"), "runtime.gcBgMarkWorker"},
		{"only parking frames", f("runtime.gopark", "runtime.block"), "runtime.gopark"},
		{"not a runtime prefix", f("runtimex.gopark", "pkg.f"), "runtimex.gopark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TopFunc(tt.frames); got != tt.want {
				t.Errorf("TopFunc = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScannerSkippedKeepsFirstFew(t *testing.T) {
	var b strings.Builder
	b.WriteString("goroutine 1 [select]:\n")
	for i := 0; i < 1000; i++ {
		b.WriteString("junk\n")
	}
	_, st := parseAll(t, b.String())
	if st.SkippedLines != 1000 || len(st.Skipped) != maxSkippedKept {
		t.Fatalf("SkippedLines %d with %d kept, want 1000 with %d", st.SkippedLines, len(st.Skipped), maxSkippedKept)
	}
	if last := st.Skipped[maxSkippedKept-1]; last.Line != maxSkippedKept+1 {
		t.Errorf("last kept line %d, want %d", last.Line, maxSkippedKept+1)
	}
	if got := st.Skipped[0].String(); got != `line 2: not a frame: "junk"` {
		t.Errorf("Skipped.String() = %q", got)
	}
}

func TestSyntaxError(t *testing.T) {
	err := error(&SyntaxError{LineNo: 12, Msg: "dump is truncated"})
	if got, want := err.Error(), "line 12: dump is truncated"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestSkippedString(t *testing.T) {
	s := Skipped{Line: 7, Text: "garbage\x1b", Reason: "not a frame"}
	if got, want := s.String(), `line 7: not a frame: "garbage\x1b"`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
