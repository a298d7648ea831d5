package live

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/bundle"
)

// Captures is the Target of diagnose: it parses every response as it
// streams in (a debug=2 dump is never held whole) into one capture per
// instance and sample.
type Captures struct {
	byKey map[string]*bundle.Capture
	order []string
}

// NewCaptures returns an empty Captures.
func NewCaptures() *Captures { return &Captures{byKey: map[string]*bundle.Capture{}} }

func captureKey(inst Instance, sample int) string { return fmt.Sprintf("%s\x00%d", inst.Name, sample) }

// Store implements Target.
func (c *Captures) Store(inst Instance, sample int, kind api.FileKind, body io.Reader) error {
	k := captureKey(inst, sample)
	cp, ok := c.byKey[k]
	if !ok {
		cp = bundle.NewCapture(fmt.Sprintf("%s sample %d", inst.Name, sample), inst.Name, time.Time{}, "")
		c.byKey[k] = cp
		c.order = append(c.order, k)
	}
	if (kind == api.FileGoroutineDebug1 || kind == api.FileGoroutineProfile) && cp.Dump != nil && !cp.Dump.Aggregated() {
		// The cheap look's profile, stored after the debug=2 dump of the
		// same sample: the dump says more.
		_, err := io.Copy(io.Discard, body)
		return err
	}
	return cp.Read(kind, fmt.Sprintf("%s%s (sample %d)", inst.Name, Paths[kind], sample), body)
}

// Loaded turns the captures into the bundle form the diagnosis reads,
// with each sample's capture time and each instance's version from res.
func (c *Captures) Loaded(res *Result) *bundle.Loaded {
	l := &bundle.Loaded{}
	for _, ir := range res.Instances {
		for n, s := range ir.Samples {
			cp, ok := c.byKey[captureKey(ir.Instance, n+1)]
			if !ok {
				continue
			}
			source := "local clock"
			for _, f := range s.Fetches {
				if f.Kind == api.FileGoroutineDebug2 && f.ServerDate != nil {
					source = "server Date header"
				}
			}
			cp.CapturedAt, cp.CapturedAtSource = s.CapturedAt, source
			cp.Mixed = s.Mixed
			cp.Withheld = s.Withheld
			if cp.Version == "" {
				cp.Version = ir.Version
			}
			l.Captures = append(l.Captures, cp)
			l.Warnings = append(l.Warnings, cp.Warnings()...)
		}
	}
	return l
}

// Dir is the Target of collect: it writes each response to
// ROOT/<instance>/sample-N/<file> in the layout analyze reads.
type Dir struct {
	Root string
}

// Store implements Target.
func (d *Dir) Store(inst Instance, sample int, kind api.FileKind, body io.Reader) error {
	dir := filepath.Join(d.Root, SafeName(inst.Name), fmt.Sprintf("sample-%d", sample))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, bundle.FileName[kind])
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%s: writing %s: %w", inst.Name, path, err)
	}
	return f.Close()
}

// Finish writes each sample's captured-at.txt, copies /version into every
// sample that lacks it, and writes the manifest.
func (d *Dir) Finish(res *Result, m api.Manifest) error {
	for _, ir := range res.Instances {
		inst := api.Instance{Name: ir.Instance.Name, Address: ir.Instance.Address, Pinned: ir.Instance.Pinned, Version: ir.Version, Samples: ir.Samples}
		if ir.Failed() && len(ir.Errors) > 0 {
			inst.Error = ir.Errors[0].Error()
		}
		var version []byte
		for _, s := range ir.Samples {
			if b, err := os.ReadFile(filepath.Join(d.Root, filepath.FromSlash(s.Dir), bundle.FileName[api.FileVersion])); err == nil {
				version = b
			}
		}
		for _, s := range ir.Samples {
			dir := filepath.Join(d.Root, filepath.FromSlash(s.Dir))
			if _, err := os.Stat(dir); err != nil {
				continue // nothing was fetched for this sample
			}
			at := s.CapturedAt.UTC().Format(time.RFC3339Nano) + "\n"
			if err := os.WriteFile(filepath.Join(dir, bundle.FileName[api.FileCapturedAt]), []byte(at), 0o644); err != nil {
				return err
			}
			vp := filepath.Join(dir, bundle.FileName[api.FileVersion])
			if _, err := os.Stat(vp); err != nil && version != nil {
				if err := os.WriteFile(vp, version, 0o644); err != nil {
					return err
				}
			}
		}
		m.Instances = append(m.Instances, inst)
	}
	m.APIVersion, m.Kind = api.GroupVersion, api.KindManifest
	m.Notes = append(m.Notes, res.Notes...)
	for _, ir := range res.Instances {
		for _, n := range ir.Notes {
			m.Notes = append(m.Notes, ir.Instance.Name+": "+n)
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.Root, bundle.ManifestName), append(b, '\n'), 0o644)
}
