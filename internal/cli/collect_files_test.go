package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// injectDisk makes collect create its files through create, for the test.
func injectDisk(t *testing.T, create func(string) (bundle.File, error)) {
	t.Helper()
	createBundleFile = create
	t.Cleanup(func() { createBundleFile = nil })
}

// fullFile is a file on a full disk: every write fails with ENOSPC.
type fullFile struct{ f *os.File }

func (f fullFile) Write([]byte) (int, error) { return 0, syscall.ENOSPC }
func (f fullFile) Sync() error               { return f.f.Sync() }
func (f fullFile) Close() error              { return f.f.Close() }

func TestCollectChecksTheDirIsWritableBeforeAnyFetch(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	// A read-only file system (root ignores directory modes, so the
	// refusal is injected).
	injectDisk(t, func(path string) (bundle.File, error) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EROFS}
	})
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "1", "-d", dir)
	if code != ExitError || !strings.Contains(errOut, dir+" cannot be written") || !strings.Contains(errOut, "read-only file system") {
		t.Errorf("exit %d, stderr %q; want 2 and the directory named", code, errOut)
	}
	if got := a.Requests(); len(got) != 0 {
		t.Errorf("collect fetched before finding the directory unwritable: %v", got)
	}
}

func TestCollectStopsAtTheFirstFailedWriteLeavingNoPartialFile(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	// The disk fills after the claim: the lock fits, nothing else does.
	injectDisk(t, func(path string) (bundle.File, error) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil || filepath.Base(path) == bundle.LockName {
			return f, err
		}
		return fullFile{f}, nil
	})
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, errOut := runLive(t, "collect", "--kubeconfig", kc, "--apiserver", a.Address(), "--samples", "2", "-d", dir)
	if code != ExitError || !strings.Contains(errOut, "writing "+dir+string(filepath.Separator)) || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("exit %d, stderr %q; want 2 and the path that failed", code, errOut)
	}
	for _, p := range a.Requests() {
		if strings.Contains(p, "debug=2") {
			t.Errorf("collect took the stop-the-world dump after a write had failed: %v", a.Requests())
		}
	}
	// Nothing half-written: no empty file, no captured-at.txt; the lock
	// stays, marking the bundle unfinished.
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, filepath.Base(p))
		}
		return nil
	})
	if len(files) != 1 || files[0] != bundle.LockName {
		t.Errorf("files left on the full disk: %v, want only %s", files, bundle.LockName)
	}
}

func TestCollectClaimsDirExclusively(t *testing.T) {
	a := fakeapiserver.Start(t, golden.Fixture("t2"))
	kc := fakeapiserver.Kubeconfig(t, a, fakeapiserver.TokenAdmin)
	dir := filepath.Join(t.TempDir(), "bundle")
	clk := autoStepClock{testingclock.NewFakeClock(time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC))}
	collect := func() (*CollectOptions, *bytes.Buffer) {
		var errOut bytes.Buffer
		o := NewCollectOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errOut})
		o.ConfigFlags.KubeConfig = &kc
		o.APIServers, o.Samples, o.Clock, o.Dir = []string{a.Address()}, 1, clk, dir
		return o, &errOut
	}
	// Two collects into one new directory, both validated before either
	// wrote: the second must not start.
	first, _ := collect()
	second, _ := collect()
	for _, o := range []*CollectOptions{first, second} {
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Run(); err != nil {
		t.Fatal(err)
	}
	before := len(a.Requests())
	manifest, err := os.ReadFile(filepath.Join(dir, bundle.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	err = second.Run()
	if err == nil || !strings.Contains(err.Error(), "--dir") || !strings.Contains(err.Error(), dir+" is not empty") {
		t.Errorf("second collect: err %v, want the directory refused", err)
	}
	if got := a.Requests()[before:]; len(got) != 0 {
		t.Errorf("the second collect fetched: %v", got)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, bundle.ManifestName)); !bytes.Equal(again, manifest) {
		t.Error("the second collect rewrote the manifest")
	}
	// While a collect writes, its lock names it.
	other := filepath.Join(t.TempDir(), "busy")
	if err := (&bundle.Dir{Root: other}).Claim(); err != nil {
		t.Fatal(err)
	}
	err = (&bundle.Dir{Root: other}).Claim()
	if err == nil || !strings.Contains(err.Error(), "being written by another collect") {
		t.Errorf("claim of a directory being written: %v", err)
	}
}
