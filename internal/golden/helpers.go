package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Testdata returns the path of a file under the repository's testdata,
// from the package the test runs in, at any depth below the root.
func Testdata(parts ...string) string {
	return filepath.Join(append([]string{Root(), "testdata"}, parts...)...)
}

// Open opens the Fixture file of capture (t1, t2) named name, closed
// when the test ends.
func Open(t testing.TB, capture, name string) *os.File {
	t.Helper()
	f, err := os.Open(Fixture(capture, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// JSON is v as the golden files hold it: indented by two spaces, ending
// in a newline.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// FixtureName is the golden file name of what a parser made of the
// fixture file name of capture: t2 and apf-requests.txt give
// t2-apf-requests.json.
func FixtureName(capture, name string) string {
	return capture + "-" + strings.TrimSuffix(name, filepath.Ext(name)) + ".json"
}

// CheckLineError checks that err holds wantMsg and is (wantLine > 0) or
// is not (wantLine 0) an error with a Line, at wantLine: a parser's
// *SyntaxError.
func CheckLineError(t testing.TB, err error, wantLine int, wantMsg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", wantMsg)
		return
	}
	if !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("error %q does not contain %q", err, wantMsg)
	}
	var le interface{ Line() int }
	if errors.As(err, &le) != (wantLine > 0) {
		t.Fatalf("error %T %v: want an error with a line: %v", err, err, wantLine > 0)
		return
	}
	if le != nil && le.Line() != wantLine {
		t.Errorf("%T.Line = %d, want %d", le, le.Line(), wantLine)
	}
}

// GoroutineID is the id of the calling goroutine, read from its own
// traceback header ("goroutine 18 [running]:", or "goroutine 18 gp=...
// [running]:").
func GoroutineID() int64 {
	var buf [128]byte
	f := bytes.Fields(buf[:runtime.Stack(buf[:], false)])
	id, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		panic("goroutine header " + strconv.Quote(string(buf[:])) + ": " + err.Error())
	}
	return id
}
