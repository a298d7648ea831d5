package watches

import (
	"fmt"
	"io"
	"runtime"

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

// firstIDs is how many of a dump's first goroutine ids ReadDump remembers
// to tell concatenated dumps apart (the dumping goroutine, goroutine 1,
// the runtime's): a dump lists each id once, so seeing one again means
// another dump starts. A few ids suffice and cost nothing at 1M
// goroutines; the long-lived ones recur in any later dump of a process.
const firstIDs = 64

// ReadDump streams a debug=2 goroutine dump through the classifier and
// returns its watchers, handlers and counters. A scanner error (the dump's
// line and what is wrong there) is returned as is, and so is a
// *stacks.SyntaxError at the line where a second dump starts (a goroutine
// id listed twice: the input holds concatenated dumps).
//
// It is the one loop from a dump to watchers: the loaders of captures
// (internal/bundle), of the replay's own dumps (internal/replay) and the
// upstream column's look at its own process (internal/replay/upstream)
// all use it; ReadProfile is the same for the aggregated formats.
func ReadDump(r io.Reader, opts ReadOptions) (*Dump, error) {
	return readDump(r, opts, NewCollector())
}

// readDump is ReadDump into c.
func readDump(r io.Reader, opts ReadOptions, c *Collector) (*Dump, error) {
	sc := stacks.NewScanner(r)
	defer sc.Close()
	// The scanner parses on every core (its Workers); the classifier below
	// sees the goroutines in the dump's order all the same.
	sc.Workers = runtime.GOMAXPROCS(0)
	if !opts.AllArgs {
		// Asked from the scanner's workers at once: through the shared
		// memo, not the collector's, which is this loop's alone.
		shared := c.names.sharedMemo()
		sc.SkipArgs, sc.KeepArgs = true, func(fn string) bool { return keepArgsRole(shared.decide(fn).role) }
	}
	// The classifier reads no file paths: only Each, when set, sees them.
	sc.SkipFiles = opts.Each == nil
	var first firstGoroutines
	for sc.Next() {
		g := sc.Goroutine()
		if line, ok := first.seen(g.ID, g.Line); ok {
			return nil, &stacks.SyntaxError{LineNo: g.Line, Msg: fmt.Sprintf("a second goroutine dump starts here (goroutine %d was already listed at line %d): the input holds concatenated dumps; split it into one file per capture (one directory each)", g.ID, line)}
		}
		if opts.Rename != nil || opts.Each != nil {
			// Add canonicalises too; these see the names as it will.
			c.roles = c.names.resolve(g, c.roles).roles
		}
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

// firstGoroutines remembers the lines of a dump's first firstIDs
// goroutine ids. A filter of 1,024 bits spares most goroutines the map
// lookup: only an id whose bit a first id set is looked up.
type firstGoroutines struct {
	bits  [1024 / 64]uint64
	lines map[int64]int
}

// seen reports the line where id was listed among the first ids, and
// remembers it (at line) while there is room.
func (f *firstGoroutines) seen(id int64, line int) (int, bool) {
	h := (uint64(id) * 0x9e3779b97f4a7c15) >> 54 // 10 bits
	if f.bits[h/64]&(1<<(h%64)) != 0 {
		if at, ok := f.lines[id]; ok {
			return at, true
		}
	}
	if len(f.lines) < firstIDs {
		if f.lines == nil {
			f.lines = make(map[int64]int, firstIDs)
		}
		f.lines[id] = line
		f.bits[h/64] |= 1 << (h % 64)
	}
	return 0, false
}

// ReadProfile reads an aggregated goroutine profile, format FormatDebug1
// (/debug/pprof/goroutine?debug=1) or FormatProtobuf (the gzipped
// profile.proto of debug=0), and returns it with the Dump the classifier
// makes of it (FromAggregated). The profile itself is for what counts
// goroutines and reads their frames without classifying them (the pause
// budget, the version check). A parser error (for debug=1 a
// *stacks.SyntaxError naming the line) is returned as is.
func ReadProfile(r io.Reader, format string) (*stacks.Aggregated, *Dump, error) {
	var a *stacks.Aggregated
	var err error
	switch format {
	case FormatDebug1:
		a, err = stacks.ParseDebug1(r)
	case FormatProtobuf:
		a, err = stacks.ParseProfile(r)
	default:
		return nil, nil, fmt.Errorf("unsupported goroutine profile format %q: use %q or %q", format, FormatDebug1, FormatProtobuf)
	}
	if err != nil {
		return nil, nil, err
	}
	return a, FromAggregated(a, format), nil
}
