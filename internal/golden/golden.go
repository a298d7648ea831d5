// Package golden compares test output with golden files, and rewrites them
// under `go test ./... -update`.
//
// One naming scheme: every golden file of a package is
// testdata/golden/SUBJECT[-CASE].EXT, where SUBJECT is what produced it
// (a command, a document, a capture), CASE the input or options, and EXT
// the format of the content: txt (a table), wide.txt, json, yaml, svg.
// Inputs stay in testdata/ itself, beside the goldens, never inside
// testdata/golden. Generated files that live outside testdata (the flag
// reference in docs/reference, the schemas in docs/schemas) are compared
// with AssertFile, under the same -update.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files (testdata/golden/, docs/reference/, docs/schemas/) with the current output")

// Dir is the directory of a package's golden files, relative to it
// (filepath.Join turns its slash into the system's).
const Dir = "testdata/golden"

// Assert compares got with the golden file testdata/golden/name, or
// rewrites the file under -update. name is a file name, not a path.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	if name == "" || name != filepath.Base(name) {
		t.Fatalf("golden.Assert(%q): want a file name SUBJECT[-CASE].EXT: every golden file is %s/NAME", name, Dir)
		return
	}
	AssertFile(t, filepath.Join(Dir, name), got)
}

// AssertFile compares got with the generated file at path (relative to the
// package directory), or rewrites it under -update. It is for generated
// files that are not test data (docs/reference, docs/schemas); test output
// goes through Assert.
func AssertFile(t testing.TB, path string, got []byte) {
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

// Updating reports whether the test runs with -update, for a test that
// must also remove generated files that are no longer produced.
func Updating() bool { return *update }

// Fixture returns the path of a real capture file shipped in the
// repository's testdata, from the package the test runs in, at any depth
// below the root (internal/live/harm is three levels down).
func Fixture(parts ...string) string {
	return filepath.Join(append([]string{Root(), "testdata", "kube-apiserver-v1.37.2", "seed-repro"}, parts...)...)
}

// Root is the relative path from the test's directory to the module's
// root, the nearest parent holding go.mod; ".." twice when none is found.
func Root() string {
	up := "."
	for range 8 {
		if _, err := os.Stat(filepath.Join(up, "go.mod")); err == nil {
			return up
		}
		up = filepath.Join(up, "..")
	}
	return filepath.Join("..", "..")
}
