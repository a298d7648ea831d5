package live

import (
	"fmt"
	"io"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
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

func captureKey(instance string, sample int) string { return fmt.Sprintf("%s\x00%d", instance, sample) }

// Store implements Target.
func (c *Captures) Store(instance string, sample int, kind api.FileKind, body io.Reader) error {
	k := captureKey(instance, sample)
	cp, ok := c.byKey[k]
	if !ok {
		cp = bundle.NewCapture(fmt.Sprintf("%s sample %d", instance, sample), instance, time.Time{}, "")
		c.byKey[k] = cp
		c.order = append(c.order, k)
	}
	if (kind == api.FileGoroutineDebug1 || kind == api.FileGoroutineProfile) && cp.Dump != nil && !cp.Dump.Aggregated() {
		// The cheap look's profile, stored after the debug=2 dump of the
		// same sample: the dump says more.
		_, err := io.Copy(io.Discard, body)
		return err
	}
	return cp.Read(kind, fmt.Sprintf("%s%s (sample %d)", instance, model.PathOf(kind), sample), body)
}

// Loaded turns the captures into the bundle form the diagnosis reads,
// with each sample's capture time and each instance's version from res.
func (c *Captures) Loaded(res *Result) *bundle.Loaded {
	l := &bundle.Loaded{}
	for _, ir := range res.Instances {
		for n, s := range ir.Samples {
			cp, ok := c.byKey[captureKey(ir.Instance.Name, n+1)]
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
			cp.ProfileStatus = s.ProfileStatus
			if ir.Trace != nil && ir.Trace.Summary != nil {
				cp.Trace = ir.Trace.Summary
			}
			if cp.Version == "" {
				cp.Version = ir.Version
			}
			l.Captures = append(l.Captures, cp)
			l.Warnings = append(l.Warnings, cp.Warnings()...)
		}
	}
	return l
}

// Manifest returns m with the instances read, their samples and the
// notes of the run: the manifest of the bundle a bundle.Dir target wrote.
func (r *Result) Manifest(m api.Manifest) api.Manifest {
	for _, ir := range r.Instances {
		inst := api.Instance{Name: ir.Instance.Name, Address: ir.Instance.Address, Pinned: ir.Instance.Pinned, Version: ir.Version, Samples: ir.Samples, Cost: ir.Cost, Evidence: ir.EvidenceText()}
		if ir.Trace != nil {
			inst.Trace = ir.Trace.Fetch
		}
		if why := ir.AsideIncomplete(); why != "" {
			inst.Incomplete = append(inst.Incomplete, why)
		}
		if ir.Failed() && len(ir.Errors) > 0 {
			inst.Error = ir.Errors[0].Error()
		}
		m.Instances = append(m.Instances, inst)
	}
	m.Notes = append(m.Notes, r.Notes...)
	if r.Coverage.Read > 0 || r.Coverage.Live > 0 {
		c := r.Coverage
		m.Coverage = &c
	}
	for _, ir := range r.Instances {
		for _, n := range ir.Notes {
			m.Notes = append(m.Notes, ir.Instance.Name+": "+n)
		}
	}
	return m
}
