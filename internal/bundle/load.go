package bundle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Load's steps: walk.go reads the inputs into captures (one per
// directory, one for the files named on the command line), capture.go
// parses each input into its capture, group.go sorts the captures into
// API servers for the diagnosis.

// Loaded is the result of Load.
type Loaded struct {
	Captures []*Capture
	// Warnings say what was skipped or could not be used.
	Warnings []string
	// Instances are the instances the bundles' manifests record (what
	// each collect run cost them, and its evidence).
	Instances []api.Instance
	// AuditLogs are the files of the bundles' AuditDir: the watch
	// requests of the audit logs collect was given, read by the engine as
	// every audit log given to a run.
	AuditLogs []AuditSource
	// Coverage is how many of the live instances each collect run read,
	// one per manifest that records it.
	Coverage []api.InstanceCoverage
}

// Options tune Load.
type Options struct {
	// Stdin is read for the path "-".
	Stdin io.Reader
	// CapturedAt overrides the capture time; it applies only when the
	// inputs form a single capture.
	CapturedAt time.Time
	// Now is the current time, to refuse capture times in the future;
	// zero skips that check.
	Now time.Time
	// MaxDumpBytes bounds each debug=2 goroutine dump, after
	// decompression; 0 means MaxFileBytes(api.FileGoroutineDebug2). A
	// traceback saved from a crash log of a large server (no runtime cut)
	// can be larger than the default.
	MaxDumpBytes int64
	// Words name, in the caller's terms, what sets CapturedAt (in
	// messages that question it; empty: "option") and how to raise
	// MaxDumpBytes (in the error of a dump past it; empty says nothing).
	Words english.Words
}

// limit is the bound of an input of kind.
func (o Options) limit(kind api.FileKind) int64 {
	if kind == api.FileGoroutineDebug2 && o.MaxDumpBytes > 0 {
		return o.MaxDumpBytes
	}
	return MaxFileBytes(kind)
}

func (o Options) capturedAtSource() string {
	if o.Words.CapturedAt == "" {
		return "option"
	}
	return o.Words.CapturedAt
}

// CapturedAtError is Options.CapturedAt given for inputs that hold more
// than one capture.
type CapturedAtError struct {
	// Source is Options.Words.CapturedAt, or "option".
	Source   string
	Captures int
	// Names lists the captures.
	Names string
}

func (e *CapturedAtError) Error() string {
	return fmt.Sprintf("%s applies to a single capture, but the inputs hold %d (%s): give each directory a captured-at.txt instead", e.Source, e.Captures, e.Names)
}

// Load reads paths: files, directories (walked; every directory holding
// recognised files is one capture) and "-" for stdin. A named file that
// cannot be read or recognised is an error; an unrecognised file met
// while walking a directory is skipped with a warning.
func Load(paths []string, opts Options) (*Loaded, error) {
	return LoadContext(context.Background(), paths, opts)
}

// LoadContext is Load, stopped once ctx is done (Ctrl-C): every input is
// read through ctx, so a parse of a large dump ends at its next read,
// and then it returns ctx.Err() and nothing loaded.
func LoadContext(ctx context.Context, paths []string, opts Options) (*Loaded, error) {
	ld := &loader{ctx: ctx, opts: opts, l: &Loaded{}, byDir: map[string]*Capture{}, given: map[string]bool{}}
	for _, p := range paths {
		err := ld.readPath(p)
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		if err != nil {
			return nil, err
		}
	}
	traces := ld.keepCaptures()
	if err := ld.applyManifests(); err != nil {
		return nil, err
	}
	ld.attachTraces(traces)
	ld.warnUnkeyed()
	if len(ld.l.Captures) == 0 {
		return nil, ld.nothingFound(paths)
	}
	if err := ld.overrideCaptureTime(); err != nil {
		return nil, err
	}
	if err := ld.checkCaptures(); err != nil {
		return nil, err
	}
	ld.l.Warnings = append(ld.l.Warnings, ld.l.orderWarnings()...)
	return ld.l, nil
}

// loader is one Load: the captures its inputs form, keyed by directory
// in the order met, and what it warns about. Not safe for concurrent use.
type loader struct {
	ctx   context.Context
	opts  Options
	l     *Loaded
	byDir map[string]*Capture
	order []string
	// explicitName names the capture of the files given on the command
	// line (see mergeName).
	explicitName string
	// manifests are the collect manifests met, applied once every input
	// is read.
	manifests []string
	stdinUsed bool
	// given are the paths given, cleaned, to read each once.
	given map[string]bool
	// skips are the warnings of reading the paths, summarised per kind.
	skips english.Summary
}

// explicitKey keys the capture of the files named on the command line,
// and stdin: the user put them together.
const explicitKey = "\x00explicit"

// capture returns the capture keyed key, made (named name) when new.
func (ld *loader) capture(key, name string) *Capture {
	if c, ok := ld.byDir[key]; ok {
		return c
	}
	c := NewCapture(name, "", time.Time{}, "")
	ld.byDir[key] = c
	ld.order = append(ld.order, key)
	return c
}

// keepCaptures names the command line's capture and keeps, in the order
// met, the captures that hold a goroutine dump, an APF dump or metrics. It
// returns the captures that hold only an execution trace, for
// attachTraces.
func (ld *loader) keepCaptures() (traces []*Capture) {
	if c, ok := ld.byDir[explicitKey]; ok {
		c.Name = ld.explicitName
	}
	for _, dir := range ld.order {
		c := ld.byDir[dir]
		if len(c.files) == 0 {
			continue
		}
		if c.Dump == nil && c.Requests == nil && c.Metrics == nil && c.Levels == nil && c.Trace != nil {
			traces = append(traces, c)
			continue
		}
		if c.Dump == nil && c.Requests == nil && c.Metrics == nil && c.Levels == nil {
			// Only version or capture time: not a capture of its own.
			ld.warn(skipNoCapture, fmt.Sprintf("skipped %s: no goroutine dump, APF dump or metrics", dir))
			continue
		}
		ld.l.Captures = append(ld.l.Captures, c)
	}
	ld.l.Warnings = append(ld.l.Warnings, ld.skips.Lines()...)
	return traces
}

// applyManifests gives the captures of collect bundles their instance,
// capture time and notes.
func (ld *loader) applyManifests() error {
	for _, m := range ld.manifests {
		if err := applyManifest(ld.l, m); err != nil {
			return err
		}
	}
	return nil
}

// warnUnkeyed gathers the captures' warnings, and warns when several
// captures cannot be told to be of one process.
func (ld *loader) warnUnkeyed() {
	l := ld.l
	var unkeyed []*Capture
	for _, c := range l.Captures {
		l.Warnings = append(l.Warnings, c.Warnings()...)
		if c.Instance == "" && c.Dump != nil && (c.Metrics == nil || math.IsNaN(c.Metrics.ProcessStartTime)) {
			unkeyed = append(unkeyed, c)
		}
	}
	if len(unkeyed) > 1 {
		l.Warnings = append(l.Warnings, fmt.Sprintf("%s carry no process_start_time_seconds (no /metrics): each is read as an API server of its own; add each capture's metrics.txt to read captures of one process as samples", captureNames(unkeyed)))
	}
}

// nothingFound is the error of inputs that form no capture.
func (ld *loader) nothingFound(paths []string) error {
	msg := fmt.Sprintf("no goroutine dump, APF dump or metrics found in %s", strings.Join(quoteAll(paths), ", "))
	if len(ld.l.Warnings) > 0 {
		msg += " (" + strings.Join(ld.l.Warnings, "; ") + ")"
	}
	return errors.New(msg)
}

// overrideCaptureTime applies Options.CapturedAt to the single capture.
func (ld *loader) overrideCaptureTime() error {
	opts, l := ld.opts, ld.l
	if opts.CapturedAt.IsZero() {
		return nil
	}
	if len(l.Captures) > 1 {
		return &CapturedAtError{Source: opts.capturedAtSource(), Captures: len(l.Captures), Names: captureNames(l.Captures)}
	}
	l.Captures[0].CapturedAt, l.Captures[0].CapturedAtSource = opts.CapturedAt, opts.capturedAtSource()
	return nil
}

// checkCaptures refuses impossible capture times, drops APF requests of
// a later moment and warns of foreign dumps.
func (ld *loader) checkCaptures() error {
	l := ld.l
	for _, c := range l.Captures {
		if err := c.checkCaptureTime(ld.opts.Now); err != nil {
			return err
		}
		if w := c.dropLaterRequests(); w != "" {
			l.Warnings = append(l.Warnings, w)
		}
		if c.Foreign() {
			l.Warnings = append(l.Warnings, foreignWarning(c.Name))
		}
	}
	return nil
}
