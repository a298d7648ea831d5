package stacks

import (
	"strings"
	"testing"
)

// TestLinesLongerThanTheReadBufferAreAssembled: a frame line between the
// read buffer (64 KiB) and MaxLineBytes is one line, not an error.
func TestLinesLongerThanTheReadBufferAreAssembled(t *testing.T) {
	args := strings.Repeat("0x1, ", 40000) // 200 KB
	dump := "goroutine 7 [select]:\nmain.f(" + args + "0x2)\n\t/src/main.go:12 +0x1\ncreated by main.main in goroutine 1\n\t/src/main.go:3 +0x2\n\ngoroutine 8 [running]:\nmain.g()\n\t/src/main.go:20 +0x3\ncreated by main.main in goroutine 1\n\t/src/main.go:4 +0x2\n"
	gs, st, err := ParseDebug2(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || st.SkippedLines != 0 {
		t.Fatalf("%d goroutines, %d skipped lines; want 2 and 0", len(gs), st.SkippedLines)
	}
	if f := gs[0].Frames[0]; f.Func != "main.f" || len(f.Args) != len(args)+3 || f.Line != 12 {
		t.Errorf("frame = %q line %d, args of %d bytes", f.Func, f.Line, len(f.Args))
	}
	if gs[1].Frames[0].Func != "main.g" {
		t.Errorf("the goroutine after the long line = %+v", gs[1].Frames)
	}
}
