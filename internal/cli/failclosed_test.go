package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// unknownShape renames the initial-phase functions the classifier keys on
// to names of the same length (so the protobuf profile's string table
// stays valid): a watcher loop of a shape it has never seen, as
// Kubernetes 1.38's was to it.
var unknownShape = [][2]string{
	{"processInterval", "processInitEvts"},
	{"sendWatchCacheEvent", "emitWatchCacheEvent"},
}

// renamedCapture copies the real capture dir into the test's temporary
// directory with the initial-phase functions renamed in its goroutine
// dumps, and returns the copy.
func renamedCapture(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case "goroutine-debug2.txt", "goroutine-debug1.txt":
			b = rename(b)
		case "goroutine.pb.gz":
			b = regzip(t, rename(gunzip(t, b)))
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func rename(b []byte) []byte {
	for _, r := range unknownShape {
		if !bytes.Contains(b, []byte(r[0])) {
			panic("fixture lacks " + r[0])
		}
		b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
	}
	return b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func regzip(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A shape the classifier has never seen must not give an all-clear: the
// APF rows of the stuck and the paced watch, initializing past the stall
// bound on every sample with no watcher it recognises, are named as
// undecided and the run is incomplete (exit 2), whichever profile is read.
func TestAnalyzeUnknownShapeFailsClosed(t *testing.T) {
	t1, t2 := renamedCapture(t, golden.Fixture("t1")), renamedCapture(t, golden.Fixture("t2"))
	only := func(dir string, names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	tests := []struct {
		name string
		args []string
	}{
		{"two captures, debug=2", []string{t1, t2}},
		{"one capture, debug=2", []string{t2}},
		{"debug=1", only(t2, "goroutine-debug1.txt", "apf-requests.txt", "captured-at.txt")},
		{"protobuf", only(t2, "goroutine.pb.gz", "apf-requests.txt", "captured-at.txt")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, nil, append([]string{"analyze", "-o", "json"}, tc.args...)...)
			if code != ExitError {
				t.Errorf("exit %d, want %d (incomplete); stderr:\n%s", code, ExitError, errOut)
			}
			r := decodeReport(t, out)
			var undecided []string
			for _, f := range r.Findings {
				if f.Type == "StuckInitialEvents" {
					t.Errorf("a stuck finding from a shape never seen: %+v", f)
				}
				if f.Type != "UndecidedInitialEvents" {
					continue
				}
				if f.UndecidedReason != "NoRecognisedWatcher" {
					t.Errorf("undecided reason %q, want NoRecognisedWatcher", f.UndecidedReason)
				}
				undecided = append(undecided, f.names()...)
			}
			slices.Sort(undecided)
			if diff := cmp.Diff([]string{"paced-reader", "slow-informer"}, undecided); diff != "" {
				t.Errorf("undecided APF rows (-want +got):\n%s\nreport:\n%s", diff, out)
			}
		})
	}
}
