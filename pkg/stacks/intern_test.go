package stacks

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestScannerKeepArgsOncePerName: KeepArgs is asked once per distinct
// function name of the real capture, not once per frame, and the frames
// it names keep the arguments a full parse reads.
func TestScannerKeepArgsOncePerName(t *testing.T) {
	real, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	full, _, err := ParseDebug2(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]int{}
	keep := func(fn string) bool { asked[fn]++; return strings.Contains(fn, "cacher.") }
	sc := NewScanner(bytes.NewReader(real))
	sc.SkipArgs, sc.KeepArgs = true, keep
	names, frames, i := map[string]bool{}, 0, 0
	for ; sc.Next(); i++ {
		for j, f := range sc.Goroutine().Frames {
			names[f.Func], frames = true, frames+1
			want := full[i].Frames[j]
			if !strings.Contains(f.Func, "cacher.") {
				want.Args = ""
			}
			if f != want {
				t.Fatalf("goroutine %d frame %d = %+v, want %+v", full[i].ID, j, f, want)
			}
		}
	}
	if sc.Err() != nil || i != len(full) {
		t.Fatalf("read %d goroutines of %d, err %v", i, len(full), sc.Err())
	}
	for fn, n := range asked {
		if n != 1 || !names[fn] {
			t.Errorf("KeepArgs(%q) asked %d times (a frame's name: %v), want once", fn, n, names[fn])
		}
	}
	if len(asked) != len(names) || frames < 5*len(names) {
		t.Errorf("KeepArgs asked of %d names, the frames (%d) name %d", len(asked), frames, len(names))
	}
}
