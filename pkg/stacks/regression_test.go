// Regression tests for bugs found by review and fuzzing; each names the
// input that used to fail.

package stacks

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FIXED(ancestors): with GODEBUG=tracebackancestors=N every ancestor block
// ends with its own "created by X" line. Scanner.readBody treats it as the
// goroutine's creator: CreatedBy becomes the oldest ancestor's creator
// (with its file and line), Stats().CreatedBy counts it again, and an
// ancestor's "...additional frames elided..." sets FramesElided on this
// goroutine.
//
// Fix (scanner.go, readBody): while inAncestor, skip "created by" lines
// and their file lines the way ancestor frames are skipped, and do not set
// FramesElided:
//
//	case bytes.HasPrefix(line, createdByPrefix):
//		if inAncestor {
//			last, expectFile = &Frame{}, true
//			continue
//		}
//		...
//	case ...frames elided...:
//		g.FramesElided = g.FramesElided || !inAncestor
//
// (and drop the "inAncestor = false" of the created-by case).
func TestBugAncestorCreatorOverwritten(t *testing.T) {
	gs, st := parseAll(t, ancestorDump())
	if len(gs) != 2 {
		t.Fatalf("got %d goroutines, want 2", len(gs))
	}
	want := &Goroutine{ID: 20, State: "chan receive",
		Frames:    []Frame{{Func: "main.child", Args: "0xc000010000", File: "/src/main.go", Line: 30}},
		CreatedBy: Frame{Func: "main.parent", File: "/src/main.go", Line: 25}, ParentID: 19, Line: 1}
	if diff := cmp.Diff(want, gs[0], goroutineOpts); diff != "" {
		t.Errorf("BUG: goroutine with ancestors (-want +got):\n%s", diff)
	}
	if st.CreatedBy != 2 {
		t.Errorf("BUG: Stats().CreatedBy = %d, want 2 (one per goroutine)", st.CreatedBy)
	}
}

// The same bug on a real dump written with GODEBUG=tracebackancestors=5.
func TestBugAncestorCreatorOverwrittenRealDump(t *testing.T) {
	dump, parked := helperRun(t, "dump", "GODEBUG=tracebackancestors=5")
	gs, _, err := ParseDebug2(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]*Goroutine{}
	for _, g := range gs {
		byID[g.ID] = g
	}
	for _, p := range parked {
		if g := byID[p.ID]; g == nil || g.CreatedBy.Func != p.Creator {
			t.Errorf("BUG: goroutine %d created by %q, want %q", p.ID, g.CreatedBy.Func, p.Creator)
		}
	}
}

// FIXED(recursion): Next calls skipBody for a malformed header, and skipBody
// calls Next again for the following header, so every malformed header in
// a row adds two stack frames (about 300 bytes). About 3.5 million of them
// (42 MB of "goroutine x\n") exceed Go's 1 GB stack limit: the process dies
// with "fatal error: stack overflow", which recover cannot catch.
//
// Minimal input: strings.Repeat("goroutine x\n", 4_000_000).
//
// Fix (scanner.go): make the retry a loop instead of a recursion: let
// skipBody report whether it stopped at a header or a blank line, and have
// Next "continue" its outer loop instead of calling itself.
func TestBugMalformedHeadersRecurse(t *testing.T) {
	if os.Getenv(helperEnv) == "deep" {
		// 100k malformed headers need ~30 MB of stack while recursing.
		debug.SetMaxStack(4 << 20)
		_, st, err := ParseDebug2(strings.NewReader(strings.Repeat("goroutine x\n", 100_000) + "goroutine 1 [select]:\n"))
		if err != nil || st.SkippedLines != 100_000 || st.Goroutines != 1 {
			t.Fatalf("got %+v, %v", st, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBugMalformedHeadersRecurse$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=deep")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("BUG: scanning 100k malformed headers with a 4 MB stack: %v\n%.600s", err, out)
	}
}

// Flags are documented as "verbatim" but come out innermost decoration
// first: "[select (leaked) (scan)]" gives ["scan", "leaked"]. Harmless for
// the diagnosis; listed so the order is a decision, not an accident.
func TestBugFlagsOrder(t *testing.T) {
	gs, _ := parseAll(t, debug2(gDump{header: gHeader{id: 1, status: "select", leaked: true, scan: true}, frames: []gFrame{frameSend}}))
	if diff := cmp.Diff([]string{"leaked", "scan"}, gs[0].Flags, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("BUG: flags not in header order (-want +got):\n%s", diff)
	}
}
