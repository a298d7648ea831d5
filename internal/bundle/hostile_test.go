package bundle

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestAnErrorNamesWhatHappenedAnEmptyStrayFileIsSkipped: a zero-byte
// stray file in a sample directory is skipped with a warning, as a
// non-empty unknown one is; the bundle is still read.
func TestAnErrorNamesWhatHappenedAnEmptyStrayFileIsSkipped(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "api", "sample-1")
	captureDir(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatalf("Load = %v, want the bundle read and notes.txt skipped", err)
	}
	want := "skipped " + filepath.Join(dir, "notes.txt") + ": an empty file"
	if !strings.Contains(strings.Join(l.Warnings, "\n"), want) {
		t.Errorf("warnings %q\nwant %q", l.Warnings, want)
	}
}
