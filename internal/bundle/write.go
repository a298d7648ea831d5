package bundle

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Dir writes a bundle in the layout Load reads: each response to
// ROOT/<instance>/sample-N/<file> as it is fetched (Store), then each
// sample's captured-at.txt and the manifest (Finish). It is the target
// collect hands its fetches to.
type Dir struct {
	Root string
}

// SampleDir is the directory of an instance's n-th sample, relative to
// the bundle's root, with slashes (as the manifest records it).
func SampleDir(instance string, n int) string {
	return fmt.Sprintf("%s/sample-%d", SafeName(instance), n)
}

// Store writes body as the file of kind in the instance's sample
// directory; the file must not exist yet.
func (d *Dir) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	dir := filepath.Join(d.Root, filepath.FromSlash(SampleDir(instance, sample)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, FileName(kind))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%s: writing %s: %w", instance, path, err)
	}
	return f.Close()
}

// StoreTrace writes body, an execution trace taken between the samples,
// to ROOT/<instance>/trace.out, beside the instance's sample directories;
// the file must not exist yet. It does not touch what Store writes, so it
// may run while Store writes another instance's files.
func (d *Dir) StoreTrace(instance string, body io.Reader) error {
	dir := filepath.Join(d.Root, SafeName(instance))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, FileName(api.FileTrace))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return fmt.Errorf("%s: writing %s: %w", instance, path, err)
	}
	return f.Close()
}

// Finish writes each sample's captured-at.txt, copies /version into every
// sample that lacks it, and writes m as the manifest, with its apiVersion
// and kind.
func (d *Dir) Finish(m api.Manifest) error {
	for _, inst := range m.Instances {
		var version []byte
		for _, s := range inst.Samples {
			if b, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(s.Dir), FileName(api.FileVersion))); err == nil {
				version = b
			}
		}
		for _, s := range inst.Samples {
			dir := filepath.Join(d.Root, filepath.FromSlash(s.Dir))
			if _, err := os.Stat(dir); err != nil {
				continue // nothing was fetched for this sample
			}
			at := s.CapturedAt.UTC().Format(time.RFC3339Nano) + "\n"
			if err := os.WriteFile(filepath.Join(dir, FileName(api.FileCapturedAt)), []byte(at), 0o644); err != nil {
				return err
			}
			vp := filepath.Join(dir, FileName(api.FileVersion))
			if _, err := os.Stat(vp); err != nil && version != nil {
				if err := os.WriteFile(vp, version, 0o644); err != nil {
					return err
				}
			}
		}
	}
	m.APIVersion, m.Kind = api.GroupVersion, api.KindManifest
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.Root, ManifestName), append(b, '\n'), 0o644)
}

// SafeName turns an instance name into a directory name (no ':' or '/').
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch c {
		case ':', '/', '\\', '[', ']', '%', '*', '?', '"', '<', '>', '|':
			b[i] = '_'
		}
	}
	return string(b)
}
