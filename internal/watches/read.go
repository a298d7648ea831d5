package watches

import (
	"io"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// ReadOptions tune ReadDump.
type ReadOptions struct {
	// AllArgs keeps every frame's arguments; by default only the frames
	// the classifier reads keep theirs (keepArgs), which spares a large
	// dump most of its parsing.
	AllArgs bool
	// Rename, when set, maps every function name before anything else
	// sees the goroutine (after CanonicalFunc, which ReadDump applies to
	// every name first).
	Rename func(string) string
	// Each, when set, sees every goroutine before it is classified; an
	// error stops the read and is returned as is. The goroutine is valid
	// during the call only (Clone keeps it).
	Each func(g *stacks.Goroutine) error
}

// ReadDump streams a debug=2 goroutine dump through the classifier and
// returns its watchers, handlers and counters. A scanner error (the dump's
// line and what is wrong there) is returned as is.
//
// It is the one loop from a dump to watchers: the loaders of captures
// (internal/bundle) and of the replay's own dumps (internal/replay) both use it.
func ReadDump(r io.Reader, opts ReadOptions) (*Dump, error) {
	sc := stacks.NewScanner(r)
	if !opts.AllArgs {
		sc.SkipArgs, sc.KeepArgs = true, keepArgs
	}
	c := NewCollector()
	for sc.Next() {
		g := sc.Goroutine()
		canonicalFrames(g)
		if opts.Rename != nil {
			for i := range g.Frames {
				g.Frames[i].Func = opts.Rename(g.Frames[i].Func)
			}
			g.CreatedBy.Func = opts.Rename(g.CreatedBy.Func)
		}
		if opts.Each != nil {
			if err := opts.Each(g); err != nil {
				return nil, err
			}
		}
		c.Add(g)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return c.Dump(sc.Stats()), nil
}
