package bundle

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestDetectFixtures checks every real capture file is recognised by its
// content, plain and gzipped, whatever its name.
func TestDetectFixtures(t *testing.T) {
	t.Parallel()
	want := map[string]api.FileKind{
		"goroutine-debug2.txt":    api.FileGoroutineDebug2,
		"goroutine-debug1.txt":    api.FileGoroutineDebug1,
		"goroutine.pb.gz":         api.FileGoroutineProfile,
		"apf-requests.txt":        api.FileAPFRequests,
		"apf-priority-levels.txt": api.FileAPFLevels,
		"metrics.txt":             api.FileMetrics,
		"version.json":            api.FileVersion,
		"captured-at.txt":         api.FileCapturedAt,
	}
	for _, capture := range []string{"t1", "t2"} {
		for name, kind := range want {
			b, err := os.ReadFile(golden.Fixture(capture, name))
			if err != nil {
				t.Fatal(err)
			}
			// Open takes off one gzip layer: the .pb.gz file itself is one.
			plainContent := b
			if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
				plainContent, _ = io.ReadAll(zr)
			}
			for form, data := range map[string][]byte{"plain": b, "gzip": gz(b)} {
				content := b
				if form == "plain" {
					content = plainContent
				}
				got, r, err := Open(bytes.NewReader(data))
				if err != nil || got != kind {
					t.Errorf("%s/%s (%s): kind %q, err %v; want %q", capture, name, form, got, err, kind)
					continue
				}
				// The reader yields the content from its start, uncompressed
				// (the protobuf profile keeps its own gzip layer in "plain").
				all, err := io.ReadAll(r)
				if err != nil {
					t.Errorf("%s/%s (%s): %v", capture, name, form, err)
				}
				if !bytes.Equal(all, content) {
					t.Errorf("%s/%s (%s): reader does not yield the original content", capture, name, form)
				}
			}
		}
	}
}

func TestDetectRejects(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{"empty", nil, "empty input"},
		{"prose", []byte("dear SRE,\nplease look\n"), `line 1 "dear SRE,"`},
		{"truncated gzip", gz([]byte("goroutine 1 [running]:\n"))[:12], "gzip"},
		{"json that is not /version", []byte(`{"hello": 1}`), "unrecognized content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, r, err := Open(bytes.NewReader(tc.in))
			if err == nil && r != nil {
				_, err = io.ReadAll(r)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("kind %q, err %v; want an error containing %q", k, err, tc.wantErr)
			}
		})
	}
}

// FuzzOpen: detection never panics, and whatever it accepts reads back.
func FuzzOpen(f *testing.F) {
	for _, name := range []string{"goroutine-debug1.txt", "apf-requests.txt", "apf-priority-levels.txt", "version.json", "captured-at.txt"} {
		b, err := os.ReadFile(golden.Fixture("t2", name))
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 8192 {
			b = b[:8192]
		}
		f.Add(b)
		f.Add(gz(b))
	}
	f.Add([]byte("goroutine 1 [running]:\nmain.main()\n\t/x.go:1 +0x1\n"))
	f.Add([]byte("# HELP x y\n# TYPE x counter\nx 1\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		k, r, err := Open(bytes.NewReader(in))
		if err != nil {
			return
		}
		if k == "" {
			t.Fatal("no kind and no error")
		}
		io.Copy(io.Discard, io.LimitReader(r, 1<<20))
	})
}
