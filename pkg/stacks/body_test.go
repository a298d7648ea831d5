package stacks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScannerFrameVariants(t *testing.T) {
	sys := func(f gFrame) gFrame { f.system = true; return f }
	inlined := gFrame{fn: "k8s.io/apimachinery/pkg/util/wait.JitterUntil.func1", args: "...", file: "k8s.io/apimachinery@v0.37.2/pkg/util/wait/backoff.go", line: 226}
	tests := []struct {
		name string
		g    gDump
		want Goroutine // ID and Line are filled in
	}{
		{
			name: "main goroutine without creator",
			g: gDump{header: gHeader{status: "chan receive"}, frames: []gFrame{
				{fn: "main.main", file: "/src/cmd/main.go", line: 12, off: 0x25},
			}},
			want: Goroutine{State: "chan receive", Frames: []Frame{{Func: "main.main", File: "/src/cmd/main.go", Line: 12}}},
		},
		{
			name: "inlined call without offset",
			g:    gDump{header: gHeader{status: "select"}, frames: []gFrame{inlined, frameInterval}, creator: creatorWatch},
			want: Goroutine{State: "select", Frames: wantFrames(inlined, frameInterval), CreatedBy: creatorWatch.want(), ParentID: 33855},
		},
		{
			name: "GOTRACEBACK=system fp sp pc and runtime frames",
			g: gDump{header: gHeader{system: true, m: 0, status: "select"},
				frames: []gFrame{sys(framePark), sys(frameSelect), sys(frameSend), sys(inlined), sys(frameInterval)}, creator: creatorWatch},
			want: Goroutine{State: "select", Frames: wantFrames(framePark, frameSelect, frameSend, inlined, frameInterval),
				CreatedBy: creatorWatch.want(), ParentID: 33855},
		},
		{
			name: "frame at function entry has fp but no offset",
			g: gDump{header: gHeader{system: true, m: 2, status: "running"},
				frames: []gFrame{{fn: "runtime.goexit", args: "{}", file: "runtime/asm_amd64.s", line: 1700, system: true}}},
			want: Goroutine{State: "running", Frames: []Frame{{Func: "runtime.goexit", Args: "{}", File: "runtime/asm_amd64.s", Line: 1700}}},
		},
		{
			name: "Windows paths with drive letter and spaces",
			g: gDump{header: gHeader{status: "IO wait"}, frames: []gFrame{
				{fn: "internal/poll.runtime_pollWait", args: "0x1f8a2c3e5a8, 0x72", file: "C:/Program Files/Go/src/runtime/netpoll.go", line: 351, off: 0x85},
			}, creator: gCreator{fn: "main.serve", parent: 1, file: `C:/Users/dev/src/main.go`, line: 40, off: 0x1c}},
			want: Goroutine{State: "IO wait", Frames: []Frame{{Func: "internal/poll.runtime_pollWait", Args: "0x1f8a2c3e5a8, 0x72",
				File: "C:/Program Files/Go/src/runtime/netpoll.go", Line: 351}},
				CreatedBy: Frame{Func: "main.serve", File: "C:/Users/dev/src/main.go", Line: 40}, ParentID: 1},
		},
		{
			name: "generic, closure and method value names",
			g: gDump{header: gHeader{status: "sync.Cond.Wait"}, frames: []gFrame{
				{fn: "k8s.io/client-go/util/workqueue.(*Typed[...]).Get", args: "0xc0004b2000", file: "k8s.io/client-go@v0.37.2/util/workqueue/queue.go", line: 282, off: 0x8b},
				{fn: "example.com/q.Map[go.shape.int,go.shape.string].func2.1", args: "{0xc000, 0x1}", file: "q.go", line: 9, off: 0x1},
				{fn: "net/http.(*Server).Serve-fm", args: "{0x4749700?, 0xc000?}", file: "net/http/server.go", line: 3400, off: 0x2f},
				{fn: "panic", args: "{0x3f1a20?, 0xc0001d2000?}", file: "runtime/panic.go", line: 783, off: 0x132},
			}, creator: gCreator{fn: "k8s.io/apiserver/pkg/server.(*GenericAPIServer).RunWithContext.func1", parent: 1, file: "server.go", line: 1, off: 1}},
			want: Goroutine{State: "sync.Cond.Wait", Frames: []Frame{
				{Func: "k8s.io/client-go/util/workqueue.(*Typed[...]).Get", Args: "0xc0004b2000", File: "k8s.io/client-go@v0.37.2/util/workqueue/queue.go", Line: 282},
				{Func: "example.com/q.Map[go.shape.int,go.shape.string].func2.1", Args: "{0xc000, 0x1}", File: "q.go", Line: 9},
				{Func: "net/http.(*Server).Serve-fm", Args: "{0x4749700?, 0xc000?}", File: "net/http/server.go", Line: 3400},
				{Func: "panic", Args: "{0x3f1a20?, 0xc0001d2000?}", File: "runtime/panic.go", Line: 783},
			}, CreatedBy: Frame{Func: "k8s.io/apiserver/pkg/server.(*GenericAPIServer).RunWithContext.func1", File: "server.go", Line: 1}, ParentID: 1},
		},
		{
			name: "stack unavailable",
			g:    gDump{header: gHeader{status: "running"}, unavailable: true, creator: creatorWatch},
			want: Goroutine{State: "running", StackUnavailable: true, CreatedBy: creatorWatch.want(), ParentID: 33855},
		},
		{
			name: "Go 1.20 creator without parent id",
			g: gDump{header: gHeader{status: "select"}, frames: []gFrame{frameSend},
				creator: gCreator{fn: creatorWatch.fn, file: creatorWatch.file, line: creatorWatch.line, off: creatorWatch.off}},
			want: Goroutine{State: "select", Frames: wantFrames(frameSend), CreatedBy: creatorWatch.want()},
		},
		{
			name: "Go 1.20 additional frames elided",
			g:    gDump{header: gHeader{status: "select"}, frames: []gFrame{frameSend, frameInterval}, oldElided: true, creator: creatorWatch},
			want: Goroutine{State: "select", Frames: wantFrames(frameSend, frameInterval), FramesElided: true, CreatedBy: creatorWatch.want(), ParentID: 33855},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.g.header.id = 7
			gs, st := parseAll(t, tt.g.String())
			want := tt.want
			want.ID, want.Line = 7, 1
			if len(gs) != 1 {
				t.Fatalf("got %d goroutines, want 1", len(gs))
			}
			if diff := cmp.Diff(&want, gs[0], goroutineOpts); diff != "" {
				t.Errorf("goroutine mismatch (-want +got):\n%s\ninput:\n%s", diff, tt.g)
			}
			if st.SkippedLines != 0 {
				t.Errorf("skipped %v, want none", st.Skipped)
			}
		})
	}
}

// TestScannerElidedFramesGo121 covers the traceback of Go >= 1.21 for
// stacks over 100 frames: the innermost 50, "...N frames elided...", then
// the outermost 50 (runtime/traceback.go traceback1).
func TestScannerElidedFramesGo121(t *testing.T) {
	frames := deepStack(100)
	g := gDump{header: gHeader{id: 5, status: "running"}, frames: frames, elided: 1234, elideAfter: 50, creator: creatorWatch}
	next := gDump{header: gHeader{id: 6, status: "select"}, frames: []gFrame{frameSend}, creator: creatorWatch}
	gs, st := parseAll(t, debug2(g, next))
	if len(gs) != 2 {
		t.Fatalf("got %d goroutines, want 2", len(gs))
	}
	want := &Goroutine{ID: 5, State: "running", Frames: wantFrames(frames...), FramesElided: true,
		CreatedBy: creatorWatch.want(), ParentID: 33855, Line: 1}
	if diff := cmp.Diff(want, gs[0], goroutineOpts); diff != "" {
		t.Errorf("goroutine mismatch (-want +got):\n%s", diff)
	}
	if st.SkippedLines != 0 {
		t.Errorf("skipped %v, want none", st.Skipped)
	}
}

// TestScannerAncestors checks that ancestor stacks do not become frames of
// the goroutine and do not disturb the next one. The creator and the
// elision flag are checked by TestBugAncestorCreatorOverwrites (build tag
// knownbugs) until that bug is fixed.
func TestScannerAncestors(t *testing.T) {
	gs, st := parseAll(t, ancestorDump())
	if len(gs) != 2 {
		t.Fatalf("got %d goroutines, want 2", len(gs))
	}
	if diff := cmp.Diff([]Frame{{Func: "main.child", Args: "0xc000010000", File: "/src/main.go", Line: 30}}, gs[0].Frames); diff != "" {
		t.Errorf("frames of goroutine 20 (-want +got):\n%s", diff)
	}
	if gs[0].ParentID != 19 {
		t.Errorf("ParentID = %d, want 19", gs[0].ParentID)
	}
	want := &Goroutine{ID: 21, State: "select", Frames: wantFrames(frameSend), CreatedBy: creatorWatch.want(), ParentID: 33855, Line: 27}
	if diff := cmp.Diff(want, gs[1], goroutineOpts); diff != "" {
		t.Errorf("goroutine 21 (-want +got):\n%s", diff)
	}
	if st.SkippedLines != 0 || st.WithParentID != 2 {
		t.Errorf("stats %+v, want no skipped lines and 2 parent ids", st)
	}
}

func TestSplitCall(t *testing.T) {
	tests := []struct {
		line     string
		fn, args string
		ok       bool
	}{
		{line: "main.main()", fn: "main.main", ok: true},
		{line: "k8s.io/x.(*T).m(0x1, 0x2)", fn: "k8s.io/x.(*T).m", args: "0x1, 0x2", ok: true},
		{line: "main.f(...)", fn: "main.f", args: "...", ok: true},
		{line: "main.f", ok: false},
		{line: "(0x1)", ok: false},
		{line: "()", ok: false},
	}
	for _, tt := range tests {
		fn, args, ok := splitCall([]byte(tt.line))
		if string(fn) != tt.fn || string(args) != tt.args || ok != tt.ok {
			t.Errorf("splitCall(%q) = %q, %q, %v; want %q, %q, %v", tt.line, fn, args, ok, tt.fn, tt.args, tt.ok)
		}
	}
}

func TestParseFileLine(t *testing.T) {
	tests := []struct {
		in   string
		want Frame
		ok   bool
	}{
		{in: "/src/main.go:12 +0x1d", want: Frame{File: "/src/main.go", Line: 12}, ok: true},
		{in: "/src/main.go:12 fp=0xc000 sp=0xc000 pc=0x1", want: Frame{File: "/src/main.go", Line: 12}, ok: true},
		{in: "C:/src/main.go:7", want: Frame{File: "C:/src/main.go", Line: 7}, ok: true},
		{in: "main.go", ok: false},
		{in: ":12", ok: false},
		{in: "main.go:x12", ok: false},
		{in: "main.go:4294967296", ok: false},
	}
	intern := func(b []byte) string { return string(b) }
	for _, tt := range tests {
		var got Frame
		ok := parseFileLine([]byte(tt.in), intern, &got)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("parseFileLine(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseUint(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false},
		{"99999999999999999999", 0, false},
		{"", 0, false},
		{"12a", 0, false},
	}
	for _, tt := range tests {
		if got, ok := parseUint([]byte(tt.in)); got != tt.want || ok != tt.ok {
			t.Errorf("parseUint(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
