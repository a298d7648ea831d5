package golden

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTestdataAndOpen(t *testing.T) {
	if got, want := Testdata("x", "y"), filepath.Join("..", "..", "testdata", "x", "y"); got != want {
		t.Errorf("Testdata = %q, want %q", got, want)
	}
	b, err := io.ReadAll(Open(t, "t2", "captured-at.txt"))
	if err != nil || len(b) == 0 {
		t.Errorf("Open: %d bytes, %v", len(b), err)
	}
	if _, err := os.Stat(Testdata("kube-apiserver-v1.37.2", "seed-repro", "t2")); err != nil {
		t.Errorf("Testdata: %v", err)
	}
}

func TestJSONAndFixtureName(t *testing.T) {
	if diff := cmp.Diff("{\n  \"a\": 1\n}\n", string(JSON(t, map[string]int{"a": 1}))); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ capture, name, want string }{
		{"t2", "apf-requests.txt", "t2-apf-requests.json"},
		{"t1", "goroutine-debug2.txt", "t1-goroutine-debug2.json"},
		{"t1", "goroutine.pb.gz", "t1-goroutine.pb.json"},
	} {
		if got := FixtureName(tc.capture, tc.name); got != tc.want {
			t.Errorf("FixtureName(%q, %q) = %q, want %q", tc.capture, tc.name, got, tc.want)
		}
	}
}

type lineError struct{ line int }

func (e *lineError) Error() string { return fmt.Sprintf("line %d: bad", e.line) }
func (e *lineError) Line() int     { return e.line }

// CheckLineError passes the error it describes and fails every other.
func TestCheckLineError(t *testing.T) {
	wrapped := fmt.Errorf("reading: %w", &lineError{3})
	for _, tc := range []struct {
		name      string
		err       error
		line      int
		msg       string
		failures  int
		wantFatal bool
	}{
		{"line error", wrapped, 3, "bad", 0, false},
		{"plain error", errors.New("reading line 3"), 0, "line 3", 0, false},
		{"wrong line", wrapped, 4, "bad", 1, false},
		{"wrong message", wrapped, 3, "good", 1, false},
		{"no line", errors.New("bad"), 3, "bad", 1, true},
		{"a line not wanted", wrapped, 0, "bad", 1, true},
		{"no error", nil, 0, "bad", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckLineError(r, tc.err, tc.line, tc.msg)
			if len(r.failures) != tc.failures || r.fatal != tc.wantFatal {
				t.Errorf("failures %q (fatal %v), want %d (fatal %v)", r.failures, r.fatal, tc.failures, tc.wantFatal)
			}
		})
	}
}

func TestGoroutineID(t *testing.T) {
	id := make(chan int64)
	go func() { id <- GoroutineID() }()
	got := <-id
	buf := make([]byte, 1<<20)
	if self := GoroutineID(); got == self || got <= 0 || !strings.Contains(string(buf[:runtime.Stack(buf, false)]), fmt.Sprintf("goroutine %d ", self)) {
		t.Errorf("GoroutineID: %d in another goroutine, %d here", got, self)
	}
}
