package bundle

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
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

func TestLoadSkipsUnknownFilesInDirectoriesButNotNamedOnes(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "dump"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# notes\n"), 0o644)
	l, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Captures) != 1 || len(l.Warnings) != 1 || !strings.Contains(l.Warnings[0], "README.md: unrecognized content") {
		t.Errorf("captures %d, warnings %q", len(l.Captures), l.Warnings)
	}
	_, err = Load([]string{filepath.Join(dir, "README.md")}, Options{})
	if !errors.Is(err, ErrUnknownKind) {
		t.Errorf("a named unknown file must be an error, got %v", err)
	}
}

func TestServersGroupsSamplesOfOneProcess(t *testing.T) {
	l, err := Load([]string{golden.Fixture("t2"), golden.Fixture("t1")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ss := l.Servers()
	if len(ss) != 1 || len(ss[0].Samples) != 2 {
		t.Fatalf("servers = %d, want one with two samples", len(ss))
	}
	if !ss[0].Samples[0].CapturedAt.Before(ss[0].Samples[1].CapturedAt) {
		t.Errorf("samples not ordered by capture time")
	}
	if ss[0].Name != filepath.Dir(golden.Fixture("t1")) {
		t.Errorf("name = %q", ss[0].Name)
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

// FuzzReadManifest: a manifest of any content is read or refused with an
// error, never a panic.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"watchdoctor/v1alpha1","kind":"WatchDoctorBundle","instances":[{"name":"10.0.0.1:6443","pinned":true,"samples":[{"dir":"10.0.0.1_6443/sample-1","capturedAt":"2026-11-29T10:24:32Z","fetches":[{"kind":"goroutine-debug2","path":"/debug/pprof/goroutine?debug=2","startedAt":"2026-11-29T10:24:32Z","duration":"1s","bytes":10}]}]}]}`))
	f.Add([]byte(`{"kind":"WatchDoctorBundle"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ReadManifest(bytes.NewReader(in))
		if err == nil && (m.Kind != api.KindManifest || m.APIVersion != api.GroupVersion) {
			t.Fatalf("accepted a manifest of kind %q, apiVersion %q", m.Kind, m.APIVersion)
		}
	})
}

func TestLoadNamedFilesAreOneCapture(t *testing.T) {
	dump, apfDump := golden.Fixture("t2", "goroutine-debug2.txt"), golden.Fixture("t2", "apf-requests.txt")
	other := t.TempDir()
	b, err := os.ReadFile(apfDump)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(other, "apf.txt")
	os.WriteFile(copied, b, 0o644)
	for name, args := range map[string][]string{
		"same directory":        {dump, apfDump},
		"different directories": {dump, copied},
	} {
		l, err := Load(args, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(l.Captures) != 1 || l.Captures[0].Dump == nil || l.Captures[0].Requests == nil {
			t.Errorf("%s: %d captures; want one holding the dump and the APF requests", name, len(l.Captures))
		}
	}
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := Load([]string{"-", apfDump}, Options{Stdin: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Captures) != 1 || l.Captures[0].Dump == nil || l.Captures[0].Requests == nil || l.Captures[0].Name != "command line" {
		t.Errorf("stdin and a file: %d captures named %q", len(l.Captures), l.Captures[0].Name)
	}
}

func TestLoadSymlinksAndBOM(t *testing.T) {
	dir := t.TempDir()
	target, err := filepath.Abs(filepath.Dir(golden.Fixture("t2", "x")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	l, err := Load([]string{filepath.Join(dir, "link")}, Options{})
	if err != nil {
		t.Fatalf("a link to a capture directory: %v", err)
	}
	if len(l.Captures) != 1 || l.Captures[0].Dump == nil {
		t.Fatalf("captures = %d", len(l.Captures))
	}
	b, err := os.ReadFile(golden.Fixture("t2", "apf-requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.txt")
	os.WriteFile(bom, append([]byte{0xef, 0xbb, 0xbf}, b...), 0o644)
	l, err = Load([]string{bom}, Options{})
	if err != nil || l.Captures[0].Requests == nil {
		t.Errorf("APF dump with a UTF-8 BOM: %v", err)
	}
	u16 := filepath.Join(dir, "u16.txt")
	os.WriteFile(u16, []byte{0xff, 0xfe, 'g', 0, 'o', 0}, 0o644)
	if _, err := Load([]string{u16}, Options{}); err == nil || !strings.Contains(err.Error(), "UTF-16") {
		t.Errorf("UTF-16 input: %v", err)
	}
}
