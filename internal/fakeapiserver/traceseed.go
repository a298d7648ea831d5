package fakeapiserver

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// traceSeedDir is the capture of a real kube-apiserver v1.37.2 traced for
// 20 s between two samples (test/e2e/cmd/capture-trace): slow-informer
// and paced-reader initializing since 22:20:37, sample A at 22:21:17
// (past the stall bound), one of them stuck and one slow (analyze says
// so).
func traceSeedDir() string {
	return filepath.Join(golden.Root(), "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1")
}

// TraceSeedSample copies sample-n ("1" or "2") of the trace seed into a
// directory a fake server serves: metrics.txt unzipped, and the priority
// levels of the seed-repro (the trace seed has none) so that every fetch
// answers.
func TraceSeedSample(t testing.TB, n string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(traceSeedDir(), "sample-"+n)
	for _, f := range []string{"apf-requests.txt", "captured-at.txt", "goroutine-debug1.txt", "version.json"} {
		copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))
	}
	copyFile(t, golden.Fixture("t1", "apf-priority-levels.txt"), filepath.Join(dir, "apf-priority-levels.txt"))
	f, err := os.Open(filepath.Join(src, "metrics.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.txt"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TraceSeed is the seed's execution trace: /debug/pprof/trace?seconds=20,
// 2,468,486 bytes covering 20.0 s.
func TraceSeed(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(traceSeedDir(), "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
