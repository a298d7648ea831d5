package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/bounded"
	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestEveryFileReadIsBoundedNamingTheFile(t *testing.T) {
	t.Parallel()
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

func TestMaxFileBytes(t *testing.T) {
	got := map[api.FileKind]int64{}
	for _, k := range []api.FileKind{
		api.FileGoroutineDebug2, api.FileGoroutineDebug1, api.FileGoroutineProfile,
		api.FileAPFRequests, api.FileAPFLevels, api.FileMetrics, api.FileVersion,
		api.FileCapturedAt, api.FileManifest, api.FileTrace, "unknown",
	} {
		got[k] = MaxFileBytes(k)
	}
	want := map[api.FileKind]int64{
		api.FileGoroutineDebug2:  2 * stacks.MaxDumpBytes,
		api.FileGoroutineDebug1:  stacks.MaxProfileBytes,
		api.FileGoroutineProfile: stacks.MaxProfileBytes,
		api.FileAPFRequests:      32 << 20,
		api.FileAPFLevels:        1 << 20,
		api.FileMetrics:          64 << 20,
		api.FileVersion:          64 << 10,
		api.FileCapturedAt:       256,
		api.FileManifest:         16 << 20,
		api.FileTrace:            256 << 20,
		"unknown":                1 << 20,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bounds (-want +got):\n%s", diff)
	}
}

func TestBoundedReadNamesTheFileAndKind(t *testing.T) {
	r := boundedRead(strings.NewReader(strings.Repeat("x", 300)), api.FileCapturedAt, "dir/captured-at.txt")
	_, err := io.ReadAll(r)
	if err == nil || !strings.Contains(err.Error(), "dir/captured-at.txt holds more than 256 B") {
		t.Errorf("err = %v, want one naming the file and its bound", err)
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
	_, err := Load([]string{dir}, Options{MaxDumpBytes: 1 << 20, Words: english.Words{MaxDumpSize: "--max-dump-size"}})
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
