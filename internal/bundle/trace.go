package bundle

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// isTraceHeader recognises a Go execution trace by its 16-byte header,
// "go 1.NN trace" padded with NUL bytes (golang.org/x/exp/trace
// internal/version ReadHeader). Any version is recognised here; the
// reader refuses the ones it cannot stream.
func isTraceHeader(b []byte) bool {
	rest, ok := bytes.CutPrefix(b, []byte("go 1."))
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && i < 3 && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && bytes.HasPrefix(rest[i:], []byte(" trace\x00"))
}

// readTrace streams an execution trace into c. A trace cut short is kept
// with what it proved (its Why says where it broke; the diagnosis warns);
// a stream the trace reader refuses is not of a known kind.
func (c *Capture) readTrace(name string, r io.Reader) error {
	t, err := watches.ReadTrace(r, watches.TraceOptions{Source: name})
	if t == nil {
		delete(c.files, api.FileTrace)
		return fmt.Errorf("%s: %w", name, fmt.Errorf("%w: %v", ErrUnknownKind, err))
	}
	c.Trace = t
	return nil
}

// attachTraces gives each trace met alone in a directory to the captures
// it was taken between: in collect's layout the samples beside it
// (<instance>/trace.out beside <instance>/sample-N); otherwise, when the
// inputs hold a single API server, to that one. A trace that fits no
// capture is skipped with a warning.
func (ld *loader) attachTraces(traces []*Capture) {
	l := ld.l
	for _, t := range traces {
		var mine []*Capture
		for _, c := range l.Captures {
			if filepath.Clean(filepath.Dir(c.Name)) == filepath.Clean(t.Name) || c.Name == t.Name {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 && len(l.Processes()) == 1 {
			mine = l.Captures
		}
		if len(mine) == 0 {
			l.Warnings = append(l.Warnings, fmt.Sprintf("skipped %s: an execution trace with no samples beside it (put it in the directory holding the sample directories, or give only one API server's samples)", t.files[api.FileTrace]))
			continue
		}
		for _, c := range mine {
			if c.Trace != nil && c.Trace != t.Trace {
				l.Warnings = append(l.Warnings, fmt.Sprintf("%s: two execution traces for one capture (%s, %s): the first is read", c.Name, c.Trace.Source, t.Trace.Source))
				continue
			}
			c.Trace = t.Trace
		}
	}
}

// groupTrace is the trace of a group's captures, with a note when they
// carry several.
func groupTrace(caps []*Capture) (*watches.Trace, string) {
	var t *watches.Trace
	var names []string
	for _, c := range caps {
		if c.Trace == nil || c.Trace == t {
			continue
		}
		if t == nil {
			t = c.Trace
		}
		names = append(names, c.Trace.Source)
	}
	if len(names) > 1 {
		return t, fmt.Sprintf("several execution traces for one API server (%s): %s is read", strings.Join(names, ", "), t.Source)
	}
	return t, ""
}
