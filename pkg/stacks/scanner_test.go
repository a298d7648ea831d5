package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// parseAll reads a whole debug=2 dump and fails the test on a fatal error.
func parseAll(t *testing.T, dump string) ([]*Goroutine, Stats) {
	t.Helper()
	gs, st, err := ParseDebug2(strings.NewReader(dump))
	if err != nil {
		t.Fatalf("ParseDebug2: %v\ninput:\n%s", err, dump)
	}
	return gs, st
}

var goroutineOpts = cmp.Options{cmpopts.EquateEmpty()}

// deepStack returns n distinct frames, as a recursive function prints.
func deepStack(n int) []gFrame {
	fs := make([]gFrame, n)
	for i := range fs {
		fs[i] = gFrame{fn: fmt.Sprintf("example.com/deep.f%d", i), args: "0x1", file: "deep.go", line: i + 1, off: 0x20}
	}
	return fs
}

// ancestorDump is goroutine 20 printed with GODEBUG=tracebackancestors=3:
// after its own "created by ... in goroutine 19" come the stacks of its
// ancestors at the time they ran the go statement, each with its own
// "created by" without a goroutine id; then goroutine 21.
func ancestorDump() string {
	child := gDump{
		header:  gHeader{id: 20, status: "chan receive"},
		frames:  []gFrame{{fn: "main.child", args: "0xc000010000", file: "/src/main.go", line: 30, off: 0x25}},
		creator: gCreator{fn: "main.parent", parent: 19, file: "/src/main.go", line: 25, off: 0x4f},
		ancestors: []gAncestor{
			{
				goid:    19,
				frames:  append([]gFrame{{fn: "main.parent", file: "/src/main.go", line: 25, off: 0x4f}}, deepStack(3)...),
				elided:  true,
				creator: gCreator{fn: "main.grandparent", file: "/src/main.go", line: 18, off: 0x1a},
			},
			{
				goid:    18,
				frames:  []gFrame{{fn: "main.grandparent", file: "/src/main.go", line: 18, off: 0x1a}},
				creator: gCreator{fn: "main.main", file: "/src/main.go", line: 10, off: 0x33},
			},
			{goid: 1, frames: []gFrame{{fn: "main.main", file: "/src/main.go", line: 10, off: 0x33}}},
		},
	}
	next := gDump{header: gHeader{id: 21, status: "select"}, frames: []gFrame{frameSend}, creator: creatorWatch}
	return debug2(child, next)
}

func TestScannerSeveralGoroutines(t *testing.T) {
	// The stuck watch of t2 as the runtime prints it, and the watch's
	// handler goroutine, and one printed right after the other without
	// the blank line (a concatenation of two dumps).
	watcher := gDump{header: gHeader{id: 33988, status: "select", minutes: 2}, frames: []gFrame{frameSend, frameInterval}, creator: creatorWatch}
	handler := gDump{header: gHeader{id: 33855, status: "select", minutes: 2}, frames: []gFrame{
		{fn: "golang.org/x/net/http2.(*serverConn).writeDataFromHandler", args: "0x24b5dddfeb40, 0x24b5dda83040, {0x24b5dee96000, 0x1000, 0x1000}, 0x0", file: "golang.org/x/net@v0.57.0/http2/server.go", line: 1024, off: 0x1c9},
	}, creator: gCreator{fn: "golang.org/x/net/http2.(*serverConn).scheduleHandler", parent: 33844, file: "golang.org/x/net@v0.57.0/http2/server.go", line: 2421, off: 0x21d}}
	main := gDump{header: gHeader{id: 1, status: "chan receive", minutes: 2}, frames: []gFrame{{fn: "main.main", file: "cmd/kube-apiserver/apiserver.go", line: 33, off: 0x1f}}}
	dump := debug2(watcher, handler) + main.String() + "\n\n"
	gs, st := parseAll(t, dump)
	got := make([]string, len(gs))
	for i, g := range gs {
		got[i] = fmt.Sprintf("%d %s %dmin line %d parent %d frames %d", g.ID, g.State, g.WaitMinutes, g.Line, g.ParentID, len(g.Frames))
	}
	want := []string{
		"33988 select 2min line 1 parent 33855 frames 2",
		"33855 select 2min line 9 parent 33844 frames 1",
		"1 chan receive 2min line 14 parent 0 frames 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("goroutines mismatch (-want +got):\n%s", diff)
	}
	wantStats := Stats{Lines: 18, Bytes: int64(len(dump)), Goroutines: 3, CreatedBy: 2, WithParentID: 2}
	if diff := cmp.Diff(wantStats, st); diff != "" {
		t.Errorf("stats mismatch (-want +got):\n%s", diff)
	}
	if !st.HasParentIDs() {
		t.Error("HasParentIDs() = false, want true")
	}
}

func TestScannerGo120Dump(t *testing.T) {
	old := func(c gCreator) gCreator { c.parent = 0; return c }
	dump := debug2(
		gDump{header: gHeader{id: 1, status: "chan receive"}, frames: []gFrame{{fn: "main.main", file: "main.go", line: 3, off: 0x1}}},
		gDump{header: gHeader{id: 33988, status: "select", minutes: 2}, frames: []gFrame{frameSend, frameInterval}, creator: old(creatorWatch)},
		gDump{header: gHeader{id: 40, status: "IO wait"}, frames: deepStack(100), oldElided: true, creator: old(creatorWatch)},
	)
	gs, st := parseAll(t, dump)
	if len(gs) != 3 {
		t.Fatalf("got %d goroutines, want 3", len(gs))
	}
	for _, g := range gs {
		if g.ParentID != 0 {
			t.Errorf("goroutine %d: ParentID = %d, want 0", g.ID, g.ParentID)
		}
	}
	if got := gs[1].CreatedBy; got != creatorWatch.want() {
		t.Errorf("CreatedBy = %+v, want %+v", got, creatorWatch.want())
	}
	if !gs[2].FramesElided || len(gs[2].Frames) != 100 {
		t.Errorf("goroutine 40: FramesElided %v with %d frames, want true with 100", gs[2].FramesElided, len(gs[2].Frames))
	}
	if st.CreatedBy != 2 || st.WithParentID != 0 || st.HasParentIDs() {
		t.Errorf("stats: CreatedBy %d, WithParentID %d, HasParentIDs %v; want 2, 0, false", st.CreatedBy, st.WithParentID, st.HasParentIDs())
	}
	// A dump of goroutines without creators says nothing either way.
	_, st = parseAll(t, debug2(gDump{header: gHeader{id: 1, status: "running"}, frames: []gFrame{{fn: "main.main", file: "main.go", line: 3}}}))
	if !st.HasParentIDs() {
		t.Error("dump without creators: HasParentIDs() = false, want true")
	}
}

func TestScannerCRLF(t *testing.T) {
	g1 := gDump{header: gHeader{id: 33988, status: "select", minutes: 2, labels: [][2]string{{"k", "v"}}}, frames: []gFrame{frameSend, frameInterval}, creator: creatorWatch}
	g2 := gDump{header: gHeader{id: 33855, status: "chan receive", locked: true}, frames: []gFrame{frameSend}, creator: creatorWatch}
	lf := debug2(g1, g2)
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	want, wantStats := parseAll(t, lf)
	got, gotStats := parseAll(t, crlf)
	if diff := cmp.Diff(want, got, goroutineOpts); diff != "" {
		t.Errorf("CRLF dump parses differently (-LF +CRLF):\n%s", diff)
	}
	wantStats.Bytes = int64(len(crlf))
	if diff := cmp.Diff(wantStats, gotStats); diff != "" {
		t.Errorf("CRLF stats (-want +got):\n%s", diff)
	}
}

func TestScannerSkipArgs(t *testing.T) {
	dump := debug2(gDump{header: gHeader{id: 33988, status: "select"}, frames: []gFrame{frameSend, frameInterval}, creator: creatorWatch})
	sc := NewScanner(strings.NewReader(dump))
	sc.SkipArgs = true
	if !sc.Next() {
		t.Fatalf("Next() = false, err %v", sc.Err())
	}
	want := []Frame{frameSend.want(false), frameInterval.want(false)}
	if diff := cmp.Diff(want, sc.Goroutine().Frames); diff != "" {
		t.Errorf("frames with SkipArgs (-want +got):\n%s", diff)
	}
	if sc.Next() || sc.Err() != nil {
		t.Errorf("second Next() = true or err %v, want end of input", sc.Err())
	}
}

// TestScannerSkipFiles: with SkipFiles the real capture reads as it does
// without, but for the file paths, and its file lines are still checked.
func TestScannerSkipFiles(t *testing.T) {
	real, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	real = append(real, "goroutine 1 [select]:\nmain.main()\n\tnot a file line\n"...)
	full, fullStats, err := ParseDebug2(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	sc := NewScanner(bytes.NewReader(real))
	sc.SkipFiles = true
	var got []*Goroutine
	for sc.Next() {
		got = append(got, sc.Goroutine().Clone())
	}
	for _, g := range full {
		for i := range g.Frames {
			g.Frames[i].File = ""
		}
		g.CreatedBy.File = ""
	}
	if diff := cmp.Diff(full, got); diff != "" || sc.Err() != nil {
		t.Errorf("goroutines with SkipFiles (-want +got), err %v:\n%s", sc.Err(), diff)
	}
	if diff := cmp.Diff(fullStats, sc.Stats()); diff != "" || fullStats.SkippedLines != 1 {
		t.Errorf("stats with SkipFiles (-want +got), %d lines skipped (want 1):\n%s", fullStats.SkippedLines, diff)
	}
}

// errReader returns data, then err.
type errReader struct {
	data string
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestScannerErrors(t *testing.T) {
	good := gDump{header: gHeader{id: 33988, status: "select", minutes: 2}, frames: []gFrame{frameSend, frameInterval}, creator: creatorWatch}
	goodDump := good.String() // 7 lines
	errIO := errors.New("connection reset by peer")
	long := "\t" + strings.Repeat("x", MaxLineBytes) + ".go:1 +0x1\n"
	tests := []struct {
		name string
		in   io.Reader
		// wantLine > 0 wants a *SyntaxError at that line whose message
		// contains wantMsg; 0 wants an error containing wantMsg.
		wantLine       int
		wantMsg        string
		wantGoroutines []int64
	}{
		{name: "empty input", in: strings.NewReader(""), wantMsg: "empty input"},
		{name: "blank lines only", in: strings.NewReader("\n\n\r\n"), wantLine: 3, wantMsg: "no goroutine header"},
		{name: "binary", in: strings.NewReader("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xec\xbd\n\x00\x01"), wantLine: 1, wantMsg: "not a debug=2 goroutine dump"},
		// "goroutine profile: total 3" reads as a malformed header, so the
		// error comes at the end of the input.
		{name: "debug=1 dump", in: strings.NewReader("goroutine profile: total 3\n2 @ 0x1 0x2\n"), wantLine: 2, wantMsg: "no goroutine header"},
		{name: "text before the first header", in: strings.NewReader("hello\n" + goodDump), wantLine: 1, wantMsg: `got "hello"`},
		{name: "first line over MaxLineBytes", in: strings.NewReader(strings.Repeat("g", MaxLineBytes+10)), wantLine: 1, wantMsg: "longer than"},
		{name: "frame line over MaxLineBytes", in: strings.NewReader(goodDump + "\n" + "goroutine 2 [select]:\nmain.f()\n" + long), wantLine: 11, wantMsg: "longer than", wantGoroutines: []int64{33988}},
		{name: "line of exactly MaxLineBytes is fine", in: strings.NewReader("goroutine 2 [select]:\n" + strings.Repeat("x", MaxLineBytes-3) + "()\n\tf.go:1\n"), wantGoroutines: []int64{2}},
		// Cut before any goroutine ended: nothing can be read. Cut later,
		// the dump is partial, not an error (partial_test.go).
		{name: "truncated in a function line", in: strings.NewReader(goodDump[:strings.Index(goodDump, "(0x24b5d9022270, {")]), wantLine: 1, wantMsg: "truncated before its first goroutine ended: it ends in the middle of line 4"},
		{name: "truncated in a file line", in: strings.NewReader(goodDump[:len(goodDump)-3]), wantLine: 1, wantMsg: "truncated before its first goroutine ended: it ends in the middle of line 7"},
		{name: "truncated after a function line", in: strings.NewReader("goroutine 2 [select]:\nmain.f()\n\tf.go:1 +0x1\nmain.g(0x1)\n"), wantLine: 1, wantMsg: "function line with no file line"},
		{name: "I/O error", in: &errReader{data: goodDump + "\ngoroutine 2 [select]:\n", err: errIO}, wantMsg: "reading line 10", wantGoroutines: []int64{33988}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := NewScanner(tt.in)
			var ids []int64
			for sc.Next() {
				ids = append(ids, sc.Goroutine().ID)
			}
			if diff := cmp.Diff(tt.wantGoroutines, ids); diff != "" {
				t.Errorf("goroutines before the error (-want +got):\n%s", diff)
			}
			err := sc.Err()
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Err() = nil, want an error containing %q", tt.wantMsg)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Err() = %q, want it to contain %q", err, tt.wantMsg)
			}
			var se *SyntaxError
			if isSyntax := errors.As(err, &se); isSyntax != (tt.wantLine > 0) {
				t.Fatalf("Err() = %T %v: *SyntaxError %v, want %v", err, err, isSyntax, tt.wantLine > 0)
			}
			if se != nil && se.Line() != tt.wantLine {
				t.Errorf("SyntaxError.Line = %d, want %d (%v)", se.Line(), tt.wantLine, err)
			}
			if tt.name == "I/O error" && !errors.Is(err, errIO) {
				t.Errorf("Err() = %v does not wrap the reader's error", err)
			}
			if sc.Next() {
				t.Error("Next() = true after an error")
			}
		})
	}
}

// TestScannerSkipsUnknownLines checks that lines the scanner does not know
// are skipped, counted and reported with their line numbers, never fatal.
func TestScannerSkipsUnknownLines(t *testing.T) {
	tests := []struct {
		name string
		dump string
		want []Skipped
		ids  []int64
	}{
		{
			name: "junk inside a goroutine",
			dump: "goroutine 1 [select]:\n" +
				"main.f()\n\tmain.go:1 +0x1\n" +
				"this is not a frame\n" +
				"main.g(0x1)\n\tmain.go:2 +0x2\n",
			want: []Skipped{{Line: 4, Text: "this is not a frame", Reason: "not a frame"}},
			ids:  []int64{1},
		},
		{
			name: "file line without a function line",
			dump: "goroutine 1 [select]:\n\tmain.go:1 +0x1\nmain.f()\n\tmain.go:1 +0x1\n",
			want: []Skipped{{Line: 2, Text: "\tmain.go:1 +0x1", Reason: "file line without a function line"}},
			ids:  []int64{1},
		},
		{
			name: "malformed file line",
			dump: "goroutine 1 [select]:\nmain.f()\n\tmain.go +0x1\nmain.g()\n\tmain.go:x\nmain.h()\n\tmain.go:99999999999999999999 +0x1\n",
			want: []Skipped{
				{Line: 3, Text: "\tmain.go +0x1", Reason: "malformed file:line"},
				{Line: 5, Text: "\tmain.go:x", Reason: "malformed file:line"},
				{Line: 7, Text: "\tmain.go:99999999999999999999 +0x1", Reason: "malformed file:line"},
			},
			ids: []int64{1},
		},
		{
			name: "function line without its file line before the blank line",
			dump: "goroutine 1 [select]:\nmain.f()\n\ngoroutine 2 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{{Line: 2, Reason: "function line without its file line"}},
			ids:  []int64{1, 2},
		},
		{
			name: "function line without its file line before a header",
			dump: "goroutine 1 [select]:\nmain.f()\ngoroutine 2 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{{Line: 2, Reason: "function line without its file line"}},
			ids:  []int64{1, 2},
		},
		{
			name: "text between goroutines",
			dump: "goroutine 1 [select]:\nmain.f()\n\tmain.go:1\n\nSIGQUIT: quit\nPC=0x46e601 m=0 sigcode=0\n\ngoroutine 2 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{
				{Line: 5, Text: "SIGQUIT: quit", Reason: "outside any goroutine"},
				{Line: 6, Text: "PC=0x46e601 m=0 sigcode=0", Reason: "outside any goroutine"},
			},
			ids: []int64{1, 2},
		},
		{
			name: "malformed header followed by a good goroutine",
			dump: "goroutine 1 [select]:\nmain.f()\n\tmain.go:1\n\n" +
				"goroutine x [select]:\nmain.f()\n\tmain.go:1\n\n" +
				"goroutine 3 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{
				{Line: 5, Text: "goroutine x [select]:", Reason: "malformed goroutine header"},
				{Line: 6, Text: "main.f()", Reason: "inside a malformed goroutine"},
				{Line: 7, Text: "\tmain.go:1", Reason: "inside a malformed goroutine"},
			},
			ids: []int64{1, 3},
		},
		{
			name: "malformed first header followed by a good goroutine",
			dump: "goroutine 1 [select\nmain.f()\n\tmain.go:1\ngoroutine 2 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{
				{Line: 1, Text: "goroutine 1 [select", Reason: "malformed goroutine header"},
				{Line: 2, Text: "main.f()", Reason: "inside a malformed goroutine"},
				{Line: 3, Text: "\tmain.go:1", Reason: "inside a malformed goroutine"},
			},
			ids: []int64{2},
		},
		{
			name: "malformed headers in a row",
			dump: "goroutine 1 []:\ngoroutine 2 [x, y minutes]:\ngoroutine 3 [select] \ngoroutine 4 [select]:\nmain.f()\n\tmain.go:1\n",
			want: []Skipped{
				{Line: 1, Text: "goroutine 1 []:", Reason: "malformed goroutine header"},
				{Line: 2, Text: "goroutine 2 [x, y minutes]:", Reason: "malformed goroutine header"},
				{Line: 3, Text: "goroutine 3 [select] ", Reason: "malformed goroutine header"},
			},
			ids: []int64{4},
		},
		{
			name: "hostile numbers",
			dump: "goroutine 99999999999999999999 [select]:\nmain.f()\n\tmain.go:1\n\n" +
				"goroutine 9223372036854775808 [select]:\n\n" +
				"goroutine 5 [select, 99999999999999999999 minutes]:\n\n" +
				"goroutine 6 [select, 9223372036854775807 minutes]:\n\n" +
				"goroutine -1 [select]:\n\n" +
				"goroutine 9223372036854775807 [select]:\nmain.f()\n\tmain.go:1\n" +
				"created by main.g in goroutine 99999999999999999999\n\tmain.go:2 +0x1\n",
			want: []Skipped{
				{Line: 1, Text: "goroutine 99999999999999999999 [select]:", Reason: "malformed goroutine header"},
				{Line: 2, Text: "main.f()", Reason: "inside a malformed goroutine"},
				{Line: 3, Text: "\tmain.go:1", Reason: "inside a malformed goroutine"},
				{Line: 5, Text: "goroutine 9223372036854775808 [select]:", Reason: "malformed goroutine header"},
				{Line: 7, Text: "goroutine 5 [select, 99999999999999999999 minutes]:", Reason: "malformed goroutine header"},
				{Line: 9, Text: "goroutine 6 [select, 9223372036854775807 minutes]:", Reason: "malformed goroutine header"},
				{Line: 11, Text: "goroutine -1 [select]:", Reason: "malformed goroutine header"},
			},
			ids: []int64{9223372036854775807},
		},
		{
			name: "malformed labels",
			dump: "goroutine 1 [select labels:{\"k\": v}]:\nmain.f()\n\tmain.go:1\n\ngoroutine 2 [select labels:{\"k\" \"v\"}]:\n\ngoroutine 3 [select labels:{\"k\": \"v\"}x]:\n\ngoroutine 4 [select]:\n",
			want: []Skipped{
				{Line: 1, Text: "goroutine 1 [select labels:{\"k\": v}]:", Reason: "malformed goroutine header"},
				{Line: 2, Text: "main.f()", Reason: "inside a malformed goroutine"},
				{Line: 3, Text: "\tmain.go:1", Reason: "inside a malformed goroutine"},
				{Line: 5, Text: "goroutine 2 [select labels:{\"k\" \"v\"}]:", Reason: "malformed goroutine header"},
				{Line: 7, Text: "goroutine 3 [select labels:{\"k\": \"v\"}x]:", Reason: "malformed goroutine header"},
			},
			ids: []int64{4},
		},
		{
			name: "long and invalid UTF-8 lines are shortened",
			dump: "goroutine 1 [select]:\n" + strings.Repeat("\xff", 200) + "\n",
			// The first 120 bytes are kept, and the invalid run becomes one "?".
			want: []Skipped{{Line: 2, Text: "?...", Reason: "not a frame"}},
			ids:  []int64{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, st := parseAll(t, tt.dump)
			ids := make([]int64, len(gs))
			for i, g := range gs {
				ids[i] = g.ID
			}
			if diff := cmp.Diff(tt.ids, ids); diff != "" {
				t.Errorf("goroutines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, st.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if st.SkippedLines != len(tt.want) {
				t.Errorf("SkippedLines = %d, want %d", st.SkippedLines, len(tt.want))
			}
		})
	}
}
