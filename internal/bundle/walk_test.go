package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func TestWalkWarningsAreSummarisedAfterAFewOfAKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sample := filepath.Join(dir, "i", "sample-1")
	captureDir(t, sample)
	for i := range 2000 {
		os.WriteFile(filepath.Join(sample, fmt.Sprintf("stray-%04d.txt", i)), []byte("not evidence\n"), 0o600)
	}
	l, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"skipped " + filepath.Join(sample, "stray-0000.txt") + `: unrecognized content: line 1 "not evidence" is not a goroutine dump (debug=1 or 2), an APF dump, /metrics, /version, a capture time or an execution trace`,
		"skipped " + filepath.Join(sample, "stray-0001.txt") + `: unrecognized content: line 1 "not evidence" is not a goroutine dump (debug=1 or 2), an APF dump, /metrics, /version, a capture time or an execution trace`,
		"skipped " + filepath.Join(sample, "stray-0002.txt") + `: unrecognized content: line 1 "not evidence" is not a goroutine dump (debug=1 or 2), an APF dump, /metrics, /version, a capture time or an execution trace`,
		"and 1997 more like it",
	}
	if diff := cmp.Diff(want, l.Warnings[:min(len(l.Warnings), len(want))]); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(l.Warnings) > 10 {
		t.Errorf("%d warnings for 2000 stray files", len(l.Warnings))
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

func TestLoadSymlinksAndBOM(t *testing.T) {
	t.Parallel()
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
