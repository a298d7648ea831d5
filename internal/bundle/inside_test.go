package bundle

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBundleLinkOutsideIsNotRead(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "token")
	const secret = "eyJhbGciOiJSUzI1NiIsImtpZCI6IlNFQ1JFVCJ9.not-for-any-report"
	if err := os.WriteFile(outside, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	captureDir(t, dir)
	if err := os.Symlink(outside, filepath.Join(dir, "token")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	// A link inside the bundle is read as the file it names.
	if err := os.Symlink("metrics.txt", filepath.Join(dir, "metrics-link.txt")); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{dir}, Options{})
	if err == nil || !strings.Contains(err.Error(), "metrics-link.txt and ") || !strings.Contains(err.Error(), "are both metrics") {
		t.Fatalf("a link inside the bundle was not read: %v", err)
	}
	os.Remove(filepath.Join(dir, "metrics-link.txt"))
	l, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(l.Warnings, "\n")
	if strings.Contains(all, "eyJ") {
		t.Errorf("a warning quotes the file behind a link out of the bundle:\n%s", all)
	}
	for _, want := range []string{
		filepath.Join(dir, "token") + ": a link to a file outside the directory is not read",
		filepath.Join(dir, "zero") + ": a link to a file outside the directory is not read",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings do not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, outside) {
		t.Errorf("a warning names the link's target, not the link alone:\n%s", all)
	}
}

func TestOpenIn(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	for name, content := range map[string]string{"file": "in\n", "sub/nested": "nested\n"} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(outside, []byte("out\n"), 0o600)
	for link, target := range map[string]string{
		"to-file": "file", "to-nested": "sub/nested", "to-dir": "sub",
		"to-outside": outside, "dangling": "missing", "up": "../" + filepath.Base(root) + "/file",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	type result struct{ Content, Skip string }
	got := map[string]result{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root || d.IsDir() {
			return err
		}
		f, skip, err := OpenIn(root, path, d)
		if err != nil {
			return err
		}
		var r result
		if f != nil {
			b, _ := io.ReadAll(f)
			f.Close()
			r.Content = string(b)
		}
		r.Skip = skip
		rel, _ := filepath.Rel(root, path)
		got[rel] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]result{
		"file":       {Content: "in\n"},
		"sub/nested": {Content: "nested\n"},
		"to-file":    {Content: "in\n"},
		"to-nested":  {Content: "nested\n"},
		"up":         {Content: "in\n"},
		"to-dir":     {Skip: "a link to a directory is not followed; name it on the command line"},
		"to-outside": {Skip: "a link to a file outside the directory is not read"},
		"dangling":   {Skip: "a link that cannot be followed: no such file or directory"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OpenIn (-want +got):\n%s", diff)
	}
}
