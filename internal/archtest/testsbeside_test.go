package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testsBesideRoots are the trees whose every source file has a test file
// of its own: X.go has X_test.go beside it (HOUSE_STYLE.md, "one concept
// per file, with a _test.go beside it"). doc.go files hold no code and are
// exempt. The test-helper packages (golden, fakeapiserver, dumpgen,
// benchmetrics, schematest, archtest) are held to it too: their code is
// what the other tests stand on.
var testsBesideRoots = []string{"cmd", "internal", "pkg"}

// testsBesideAllowlist are source files allowed, for a stated reason,
// to have no test of their own. It is empty: every source file has one.
// An entry that gains its test or goes away fails this test, so the list
// never outlives its reason.
var testsBesideAllowlist = map[string]bool{}

// sourcesWithoutTests lists, relative to root and with forward slashes,
// the source files under dirs that have no test file of the same stem, in
// the directories the go command builds (not testdata, nor those starting
// with "." or "_").
func sourcesWithoutTests(root string, dirs []string) ([]string, error) {
	var missing []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() {
				if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "doc.go" {
				return nil
			}
			if _, err := os.Stat(strings.TrimSuffix(path, ".go") + "_test.go"); err == nil {
				return nil
			} else if !os.IsNotExist(err) {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			missing = append(missing, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// TestEverySourceFileHasATestBesideIt fails naming every source file under
// cmd/, internal/ and pkg/ without an X_test.go of its own, and every
// allowlist entry that no longer needs to be there.
func TestEverySourceFileHasATestBesideIt(t *testing.T) {
	missing, err := sourcesWithoutTests(root, testsBesideRoots)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, f := range missing {
		listed[f] = true
		if !testsBesideAllowlist[f] {
			t.Errorf("%s has no %s_test.go beside it: test what it holds there", f, strings.TrimSuffix(filepath.Base(f), ".go"))
		}
	}
	for f := range testsBesideAllowlist {
		if !listed[f] {
			t.Errorf("%s is in testsBesideAllowlist but has a test of its own now (or is gone): remove it from the list", f)
		}
	}
}

// TestSourcesWithoutTests: the walk names a file without its test, skips
// doc.go, test files, testdata and hidden directories, and reads a test of
// the same stem only in the same directory.
func TestSourcesWithoutTests(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"pkg/a/a.go", "pkg/a/a_test.go", "pkg/a/b.go", "pkg/a/doc.go", "pkg/a/c_other.go", "pkg/a/c_other_test.go",
		"pkg/a/sub/b_test.go", "pkg/a/testdata/x.go", "pkg/a/.hidden/y.go", "pkg/a/_skip/z.go", "pkg/a/notes.txt",
		"cmd/tool/main.go", "other/o.go",
	} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sourcesWithoutTests(root, []string{"cmd", "pkg"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cmd/tool/main.go", "pkg/a/b.go"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sourcesWithoutTests (-want +got):\n%s", diff)
	}
}
