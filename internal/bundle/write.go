package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Permissions of what Dir writes, whatever the umask: a bundle holds user
// names, request paths and whole goroutine dumps, so it is private, as a
// kubeconfig is.
const (
	FilePerm os.FileMode = 0o600
	DirPerm  os.FileMode = 0o700
)

// LockName is the file Claim creates at a bundle's root and Finish
// removes: its presence says the bundle is being written (or its collect
// was interrupted), and it makes the claim exclusive.
const LockName = ".watch-doctor-collect.lock"

// Dir writes a bundle in the layout Load reads: each response to
// ROOT/<instance>/sample-N/<file> as it is fetched (Store), then each
// sample's captured-at.txt and the manifest (Finish). It is the target
// collect hands its fetches to, after Claim.
//
// Every file is written whole or not at all (a temporary file, synced,
// then renamed), with FilePerm; every directory gets DirPerm; no path
// leaves Root. Not safe for concurrent use (live.Run serialises Store).
type Dir struct {
	Root string
	// Create opens a new file for writing, failing if it exists; nil is
	// os.OpenFile with O_CREATE|O_EXCL. Tests inject a full disk here.
	Create func(path string) (File, error)
}

// File is a file Dir writes.
type File interface {
	io.Writer
	Sync() error
	Close() error
}

// SampleDir is the directory of an instance's n-th sample, relative to
// the bundle's root, with slashes (as the manifest records it).
func SampleDir(instance string, n int) string {
	return fmt.Sprintf("%s/sample-%d", SafeName(instance), n)
}

// Claim makes Root the bundle's directory, for this Dir alone: it creates
// Root (DirPerm), or takes an existing empty directory, and creates
// LockName in it exclusively. A second collect into the same directory
// fails here, and so does a directory that cannot be written (the lock is
// the first write), before anything is fetched.
func (d *Dir) Claim() error {
	err := os.Mkdir(d.Root, DirPerm)
	switch {
	case errors.Is(err, os.ErrExist):
		entries, rerr := os.ReadDir(d.Root)
		if rerr != nil {
			return fmt.Errorf("%s: %w", d.Root, unwrapPathErr(rerr))
		}
		for _, e := range entries {
			if e.Name() == LockName {
				return fmt.Errorf("%s is being written by another collect (it holds %s; remove it if that collect is gone): use a new directory", d.Root, LockName)
			}
		}
		if len(entries) > 0 {
			return fmt.Errorf("%s is not empty: use a new directory so bundles never mix", d.Root)
		}
	case err != nil:
		return fmt.Errorf("creating %s: %w", d.Root, unwrapPathErr(err))
	}
	lock := filepath.Join(d.Root, LockName)
	if err := d.write(lock, strings.NewReader("pid "+strconv.Itoa(os.Getpid())+"\n"), false); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s is being written by another collect: use a new directory", d.Root)
		}
		return fmt.Errorf("%s cannot be written: %w", d.Root, err)
	}
	// Mkdir applied the umask; an existing directory kept its mode.
	return os.Chmod(d.Root, DirPerm)
}

// Store writes body as the file of kind in the instance's sample
// directory; the file must not exist yet.
func (d *Dir) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	dir, err := d.path(SampleDir(instance, sample))
	if err != nil {
		return fmt.Errorf("%s: %w", instance, err)
	}
	if err := d.mkdirAll(dir); err != nil {
		return fmt.Errorf("%s: %w", instance, err)
	}
	path := filepath.Join(dir, FileName(kind))
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %s: %w", instance, path, os.ErrExist)
	}
	if err := d.write(path, body, true); err != nil {
		return fmt.Errorf("%s: %w", instance, err)
	}
	return nil
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
// sample that lacks it, removes a trace the manifest does not name (its
// Trace.File empty), writes m as the manifest, with its apiVersion and
// kind, and removes the lock.
func (d *Dir) Finish(m api.Manifest) error {
	for _, inst := range m.Instances {
		if err := d.finishInstance(inst); err != nil {
			return err
		}
	}
	m.APIVersion, m.Kind = api.GroupVersion, api.KindManifest
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := d.write(filepath.Join(d.Root, ManifestName), strings.NewReader(string(b)+"\n"), true); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.Root, LockName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func (d *Dir) finishInstance(inst api.Instance) error {
	if t := inst.Trace; t != nil && t.File == "" {
		// A trace the run did not keep (its store failed, or it was set
		// aside as another process'): not left for analyze to read.
		p := filepath.Join(d.Root, SafeName(inst.Name), FileName(api.FileTrace))
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	var version []byte
	for _, s := range inst.Samples {
		dir, err := d.path(s.Dir)
		if err != nil {
			return err
		}
		f, err := os.Open(filepath.Join(dir, FileName(api.FileVersion)))
		if err != nil {
			continue
		}
		// What Store wrote: bounded as Load reads it.
		b, err := io.ReadAll(boundedRead(f, api.FileVersion, f.Name()))
		f.Close()
		if err == nil {
			version = b
		}
	}
	for _, s := range inst.Samples {
		dir, err := d.path(s.Dir)
		if err != nil {
			return err
		}
		if _, err := os.Stat(dir); err != nil {
			continue // nothing was fetched for this sample
		}
		at := s.CapturedAt.UTC().Format(time.RFC3339Nano) + "\n"
		if err := d.write(filepath.Join(dir, FileName(api.FileCapturedAt)), strings.NewReader(at), true); err != nil {
			return err
		}
		vp := filepath.Join(dir, FileName(api.FileVersion))
		if _, err := os.Stat(vp); err != nil && version != nil {
			if err := d.write(vp, strings.NewReader(string(version)), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// path is rel (slashes) under Root, refused if it would leave Root.
func (d *Dir) path(rel string) (string, error) {
	p := filepath.Join(d.Root, filepath.FromSlash(rel))
	r, err := filepath.Rel(d.Root, p)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q would be written outside %s: refused", rel, d.Root)
	}
	return p, nil
}

// mkdirAll creates dir and its parents under Root with DirPerm (chmod'ed:
// the umask does not apply).
func (d *Dir) mkdirAll(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if parent := filepath.Dir(dir); parent != filepath.Clean(d.Root) {
		if err := d.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, DirPerm); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("creating %s: %w", dir, unwrapPathErr(err))
	}
	return os.Chmod(dir, DirPerm)
}

// write writes r to path whole or not at all: to a temporary file beside
// it, synced, then renamed (atomic only: a file that exists is kept, the
// lock is created in place). On failure nothing is left at path.
func (d *Dir) write(path string, r io.Reader, atomic bool) error {
	tmp := path
	if atomic {
		tmp = filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".partial")
	}
	f, err := d.create(tmp)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, unwrapPathErr(err))
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && atomic {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, unwrapPathErr(err))
	}
	return nil
}

func (d *Dir) create(path string) (File, error) {
	if d.Create != nil {
		return d.Create(path)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, FilePerm)
	if err != nil {
		return nil, err
	}
	// The umask does not apply.
	if err := f.Chmod(FilePerm); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

// SafeName turns an instance name into one directory name: every byte but
// letters, digits, '.', '-' and '_' becomes '_' (so no '/', '\', ':' or
// control character), and a name of dots alone ("", ".", "..") or one
// starting with a dot gets a leading '_', so it never names the bundle's
// parent, itself or a hidden file.
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}
