package bundle

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// What Dir writes, Load reads back: the files of each sample, its capture
// time, /version copied into every sample, and the manifest.
func TestDirWritesWhatLoadReads(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := &Dir{Root: root}
	const inst = "10.0.0.1:6443"
	for _, f := range []struct {
		sample int
		kind   api.FileKind
		file   string
	}{
		{1, api.FileMetrics, "metrics.txt"},
		{1, api.FileAPFRequests, "apf-requests.txt"},
		{1, api.FileVersion, "version.json"},
		{2, api.FileMetrics, "metrics.txt"},
	} {
		if err := d.Store(inst, f.sample, f.kind, bytes.NewReader(fixture(t, "t1", f.file))); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Store(inst, 1, api.FileMetrics, bytes.NewReader(nil)); err == nil {
		t.Error("a second store of the same file succeeded; want it refused")
	}
	at := []time.Time{time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC), time.Date(2026, 11, 29, 10, 24, 19, 0, time.UTC)}
	m := api.Manifest{Instances: []api.Instance{{Name: inst, Address: inst, Pinned: true, Samples: []api.Sample{
		{Dir: SampleDir(inst, 1), CapturedAt: at[0]},
		{Dir: SampleDir(inst, 2), CapturedAt: at[1]},
		{Dir: SampleDir(inst, 3), CapturedAt: at[1]}, // nothing fetched
	}}}}
	if err := d.Finish(m); err != nil {
		t.Fatal(err)
	}
	if SampleDir(inst, 2) != "10.0.0.1_6443/sample-2" {
		t.Errorf("SampleDir = %q", SampleDir(inst, 2))
	}
	if _, err := os.Stat(filepath.Join(root, "10.0.0.1_6443", "sample-2", "version.json")); err != nil {
		t.Errorf("version.json not copied into sample 2: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "10.0.0.1_6443", "sample-3")); !os.IsNotExist(err) {
		t.Errorf("a sample of no fetch got a directory: %v", err)
	}
	l, err := Load([]string{root}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Captures) != 2 {
		t.Fatalf("loaded %d captures, want 2", len(l.Captures))
	}
	for i, c := range l.Captures {
		if !c.CapturedAt.Equal(at[i]) || c.Version == "" {
			t.Errorf("capture %d: captured at %v (from %q), version %q; want %v and a version", i+1, c.CapturedAt, c.CapturedAtSource, c.Version, at[i])
		}
	}
	if _, err := os.Stat(filepath.Join(root, ManifestName)); err != nil {
		t.Errorf("no manifest: %v", err)
	}
}
