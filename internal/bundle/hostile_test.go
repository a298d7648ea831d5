package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Hostile bundles and hostile instance names (issue 20): what a bundle
// reads stays bounded and inside it, what collect writes stays under -d,
// private and whole.

// captureDir writes a minimal capture (metrics) into dir.
func captureDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.txt"), fixture(t, "t1", "metrics.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCollectNeverWritesOutsideDir(t *testing.T) {
	for _, inst := range []string{"..", "../..", "../escape", "/etc/x", ".", "", "a/../../b", "..:6443", "\x1b[31m", `..\..`} {
		t.Run(fmt.Sprintf("%q", inst), func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "bundle")
			d := &Dir{Root: root}
			if err := d.Claim(); err != nil {
				t.Fatal(err)
			}
			if err := d.Store(inst, 1, api.FileMetrics, bytes.NewReader(fixture(t, "t1", "metrics.txt"))); err != nil {
				t.Fatal(err)
			}
			m := api.Manifest{Instances: []api.Instance{{Name: inst, Samples: []api.Sample{{Dir: SampleDir(inst, 1), CapturedAt: time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)}}}}}
			if err := d.Finish(m); err != nil {
				t.Fatal(err)
			}
			// Everything written is under root, at depth 2 below it.
			entries, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 || entries[0].Name() != "bundle" {
				t.Errorf("written beside the bundle: %v", names(entries))
			}
			var files []string
			filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					rel, _ := filepath.Rel(root, p)
					files = append(files, filepath.ToSlash(rel))
				}
				return nil
			})
			want := []string{SafeName(inst) + "/sample-1/captured-at.txt", SafeName(inst) + "/sample-1/metrics.txt", ManifestName}
			if diff := cmp.Diff(want, files); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if strings.HasPrefix(SafeName(inst), ".") || strings.ContainsAny(SafeName(inst), `/\`) {
				t.Errorf("SafeName(%q) = %q", inst, SafeName(inst))
			}
		})
	}
	d := &Dir{Root: t.TempDir()}
	if err := d.Finish(api.Manifest{Instances: []api.Instance{{Name: "x", Samples: []api.Sample{{Dir: "../sample-1"}}}}}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a manifest sample directory out of the bundle: err %v, want it refused", err)
	}
}

func names(es []os.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestBundleFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	root := filepath.Join(t.TempDir(), "bundle")
	d := &Dir{Root: root}
	if err := d.Claim(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []api.FileKind{api.FileMetrics, api.FileVersion} {
		if err := d.Store("10.0.0.1:6443", 1, k, bytes.NewReader(fixture(t, "t1", FileName(k)))); err != nil {
			t.Fatal(err)
		}
	}
	m := api.Manifest{Instances: []api.Instance{{Name: "10.0.0.1:6443", Samples: []api.Sample{{Dir: SampleDir("10.0.0.1:6443", 1)}, {Dir: SampleDir("10.0.0.1:6443", 2)}}}}}
	if err := d.Store("10.0.0.1:6443", 2, api.FileMetrics, bytes.NewReader(fixture(t, "t1", "metrics.txt"))); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(m); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		got[filepath.ToSlash(rel)] = st.Mode().String()
		return nil
	})
	want := map[string]string{
		".":                                      "drwx------",
		"10.0.0.1_6443":                          "drwx------",
		"10.0.0.1_6443/sample-1":                 "drwx------",
		"10.0.0.1_6443/sample-1/metrics.txt":     "-rw-------",
		"10.0.0.1_6443/sample-1/version.json":    "-rw-------",
		"10.0.0.1_6443/sample-1/captured-at.txt": "-rw-------",
		"10.0.0.1_6443/sample-2":                 "drwx------",
		"10.0.0.1_6443/sample-2/metrics.txt":     "-rw-------",
		"10.0.0.1_6443/sample-2/version.json":    "-rw-------",
		"10.0.0.1_6443/sample-2/captured-at.txt": "-rw-------",
		ManifestName:                             "-rw-------",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes under umask 022 (-want +got):\n%s", diff)
	}
}

func TestBundleLinkOutsideIsNotRead(t *testing.T) {
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

func TestEveryFileReadIsBoundedNamingTheFile(t *testing.T) {
	t.Run("captured-at", func(t *testing.T) {
		dir := t.TempDir()
		captureDir(t, dir)
		// A capture time, then spaces past the bound: once silently cut.
		at := "2026-11-29T10:23:09Z" + strings.Repeat(" ", 300) + "\n"
		p := filepath.Join(dir, "captured-at.txt")
		os.WriteFile(p, []byte(at), 0o600)
		_, err := Load([]string{dir}, Options{})
		var tl *bounded.TooLargeError
		if !errors.As(err, &tl) || !strings.Contains(err.Error(), p+" holds more than 256 B") {
			t.Errorf("err = %v, want one naming %s and its bound", err, p)
		}
	})
	t.Run("manifest", func(t *testing.T) {
		dir := t.TempDir()
		captureDir(t, filepath.Join(dir, "i", "sample-1"))
		p := filepath.Join(dir, ManifestName)
		big := fmt.Sprintf(`{"apiVersion": %q, "kind": %q, "notes": [%q]}`, api.GroupVersion, api.KindManifest, strings.Repeat("x", MaxManifestBytes))
		os.WriteFile(p, []byte(big), 0o600)
		_, err := Load([]string{dir}, Options{})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "more than 16 MiB") {
			t.Errorf("err = %v, want one naming %s and its bound", err, p)
		}
	})
	t.Run("APF levels, sparse 3 GiB", func(t *testing.T) {
		dir := t.TempDir()
		captureDir(t, dir)
		p := filepath.Join(dir, "apf-priority-levels.txt")
		// Valid rows up to the bound, then a hole: the bound, not the
		// parser, must stop it.
		rows := strings.SplitAfter(string(fixture(t, "t1", "apf-priority-levels.txt")), "\n")
		var b bytes.Buffer
		b.WriteString(rows[0])
		for i := 0; b.Len() <= int(MaxFileBytes(api.FileAPFLevels)); i++ {
			fmt.Fprintf(&b, "level-%d,%s", i, strings.SplitN(rows[1], ",", 2)[1])
		}
		os.WriteFile(p, b.Bytes(), 0o600)
		if err := os.Truncate(p, 3<<30); err != nil {
			t.Fatal(err)
		}
		_, err := Load([]string{dir}, Options{})
		if err == nil || !strings.Contains(err.Error(), p+" holds more than 1 MiB") {
			t.Errorf("err = %v, want one naming %s and its bound", err, p)
		}
	})
}

func TestWalkWarningsAreSummarisedAfterAFewOfAKind(t *testing.T) {
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

// TestDumpBoundIsAnOption: Options.MaxDumpBytes bounds a debug=2 dump in
// place of the default, and the refusal says how to raise it; a raised
// bound reads the dump whole.
func TestDumpBoundIsAnOption(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "goroutine-debug2.txt")
	dump := fixture(t, "t1", "goroutine-debug2.txt") // 2.0 MiB
	if err := os.WriteFile(p, dump, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load([]string{dir}, Options{MaxDumpBytes: 1 << 20, MaxDumpSource: "--max-dump-size"})
	var tl *bounded.TooLargeError
	want := p + " holds more than 1 MiB, the most a goroutine-debug2 file may hold (raise the bound with --max-dump-size)"
	if !errors.As(err, &tl) || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	l, err := Load([]string{dir}, Options{MaxDumpBytes: int64(len(dump))})
	if err != nil {
		t.Fatalf("a dump of exactly the bound: %v", err)
	}
	if d := l.Captures[0].Dump; d == nil || d.Goroutines == 0 || d.Partial != "" {
		t.Errorf("the dump read at its bound: %+v, want every goroutine", d)
	}
}
