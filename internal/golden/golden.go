// Package golden compares test output with files under a package's
// testdata directory. Run `go test ./... -update` to rewrite them.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/ with the current output")

// Assert compares got with the golden file at path (relative to the
// package directory), or rewrites the file under -update.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s mismatch (-want +got), run with -update if the change is intended:\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// Fixture returns the path of a real capture file shipped in the
// repository's testdata, from a package two levels below the root.
func Fixture(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro"}, parts...)...)
}
