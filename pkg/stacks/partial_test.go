package stacks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// partialDump is three whole goroutines as the runtime writes them.
const partialDump = "goroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1\n\n" +
	"goroutine 7 [select]:\nmain.f()\n\t/src/main.go:12 +0x1\ncreated by main.main in goroutine 1\n\t/src/main.go:3 +0x2\n\n" +
	"goroutine 8 [select]:\nmain.g()\n\t/src/main.go:20 +0x3\ncreated by main.main in goroutine 1\n\t/src/main.go:4 +0x2\n"

// TestPartialDumps: a dump cut after its first goroutine is read up to the
// cut; the goroutine cut in the middle is left out and Stats.Partial says
// where the cut is. Before, a mid-line cut was a fatal error and a cut at a
// line boundary a warning on a dump read as whole (issue 10 item 4, issue
// 13 defect 5).
func TestPartialDumps(t *testing.T) {
	cutAfter := func(s string) string { return partialDump[:strings.Index(partialDump, s)+len(s)] }
	tests := []struct {
		name        string
		in          string
		wantIDs     []int64
		wantPartial string
	}{
		{"whole", partialDump, []int64{1, 7, 8}, ""},
		{"goroutine 1 alone is whole", "goroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1\n", []int64{1}, ""},
		{"mid-line", cutAfter("main.g()\n\t/src/ma"), []int64{1, 7}, "the dump is cut: it ends in the middle of line 13, in goroutine 8 (line 11), which is left out"},
		{"in a header", cutAfter("goroutine 8 [sel"), []int64{1, 7}, "the dump is cut: it ends in the middle of a goroutine header (line 11)"},
		{"whole header without newline", cutAfter("goroutine 8 [select]:"), []int64{1, 7}, "the dump is cut: it ends in the middle of a goroutine header (line 11)"},
		{"line boundary before created by", cutAfter("+0x3\n"), []int64{1, 7}, `the dump is cut: its last goroutine (8, line 11) ends before its "created by" line, so it is left out`},
		{"after created by, before its file line", cutAfter("created by main.main in goroutine 1\n\t/src/main.go:3 +0x2\n\ngoroutine 8 [select]:\nmain.g()\n\t/src/main.go:20 +0x3\ncreated by main.main in goroutine 1\n"), []int64{1, 7}, "the dump is cut: it ends after a function line with no file line (line 14), in goroutine 8 (line 11), which is left out"},
		// head -n 13 of the dump: the same cut as issue 13's
		// `head -n 30089 goroutine-debug2.txt`, inside a goroutine's frames.
		{"head -n", strings.Join(strings.SplitAfter(partialDump, "\n")[:13], ""), []int64{1, 7}, `the dump is cut: its last goroutine (8, line 11) ends before its "created by" line, so it is left out`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gs, st, err := ParseDebug2(strings.NewReader(tc.in))
			if err != nil {
				t.Fatalf("ParseDebug2: %v", err)
			}
			var ids []int64
			for _, g := range gs {
				ids = append(ids, g.ID)
			}
			if diff := cmp.Diff(tc.wantIDs, ids); diff != "" {
				t.Errorf("goroutines (-want +got):\n%s", diff)
			}
			if st.Goroutines != len(tc.wantIDs) {
				t.Errorf("Stats.Goroutines = %d, want %d", st.Goroutines, len(tc.wantIDs))
			}
			if st.Partial != tc.wantPartial {
				t.Errorf("Stats.Partial = %q, want %q", st.Partial, tc.wantPartial)
			}
		})
	}
}

// TestDumpOfExactly64MiBIsPartial: the runtime writes what fitted in its
// 64 MiB buffer (runtime/pprof writeGoroutineStacks), so a dump of exactly
// that size is partial even when the cut falls between two goroutines.
func TestDumpOfExactly64MiBIsPartial(t *testing.T) {
	var b strings.Builder
	b.Grow(MaxDumpBytes)
	g := func(id int, fn string) string {
		return fmt.Sprintf("goroutine %d [select]:\nmain.%s()\n\t/src/main.go:12 +0x1\ncreated by main.main in goroutine 1\n\t/src/main.go:3 +0x2\n\n", id, fn)
	}
	id := 2
	for b.Len()+2*len(g(id, "f")) < MaxDumpBytes {
		b.WriteString(g(id, "f"))
		id++
	}
	// The last goroutine fills the buffer to its last byte, ending at a
	// line boundary.
	last := g(id, "f")
	pad := MaxDumpBytes - b.Len() - len(last)
	b.WriteString(g(id, "f"+strings.Repeat("x", pad)))
	if b.Len() != MaxDumpBytes {
		t.Fatalf("built %d bytes, want %d", b.Len(), MaxDumpBytes)
	}
	sc := NewScanner(strings.NewReader(b.String()))
	sc.SkipArgs = true
	n := 0
	for sc.Next() {
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	st := sc.Stats()
	if n != id-1 {
		t.Errorf("read %d goroutines, want %d", n, id-1)
	}
	if want := "the dump is exactly 64 MiB, where the runtime cuts a debug=2 dump: goroutines after the last one read are missing"; st.Partial != want {
		t.Errorf("Stats.Partial = %q, want %q", st.Partial, want)
	}
	// One byte less is a whole dump cut mid-line: both reasons are named.
	sc = NewScanner(strings.NewReader(b.String()[:MaxDumpBytes-1] + "y"))
	for sc.Next() {
	}
	if st := sc.Stats(); sc.Err() != nil || !strings.Contains(st.Partial, "in the middle of line") || !strings.Contains(st.Partial, "exactly 64 MiB") {
		t.Errorf("Stats.Partial = %q, err %v; want a mid-line cut at 64 MiB", st.Partial, sc.Err())
	}
}
