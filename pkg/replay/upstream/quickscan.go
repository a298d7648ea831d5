package upstream

import (
	"bytes"
	"strconv"
	"strings"
)

// quickGoroutine is what a settle poll needs of one goroutine of a debug=2
// dump. Its strings point into the dump and die with it. quickScan reuses
// it for every goroutine: not safe to keep or share.
type quickGoroutine struct {
	id, parent int64
	state      string
	// funcs are the frames' functions, innermost first.
	funcs []string
}

// quickScan reads a debug=2 dump (runtime.Stack of all goroutines) for the
// settle loop, which polls hundreds of times per second: it keeps headers,
// function names and parents and allocates almost nothing. What a replay
// reports is read by pkg/stacks and pkg/watches (replay.ClassifyDump); this
// only decides when to take that reading.
func quickScan(dump []byte, fn func(*quickGoroutine)) {
	var g quickGoroutine
	inG := false
	flush := func() {
		if inG {
			fn(&g)
		}
		inG = false
	}
	for len(dump) > 0 {
		var line []byte
		if i := bytes.IndexByte(dump, '\n'); i >= 0 {
			line, dump = dump[:i], dump[i+1:]
		} else {
			line, dump = dump, nil
		}
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("goroutine ")):
			flush()
			rest := line[len("goroutine "):]
			sp := bytes.IndexByte(rest, ' ')
			if sp < 0 {
				continue
			}
			id, _ := strconv.ParseInt(string(rest[:sp]), 10, 64)
			state := rest[sp+1:]
			state = bytes.TrimSuffix(bytes.TrimPrefix(state, []byte("[")), []byte("]:"))
			if c := bytes.IndexByte(state, ','); c >= 0 {
				state = state[:c]
			}
			g = quickGoroutine{id: id, state: string(state), funcs: g.funcs[:0]}
			inG = true
		case line[0] == '\t':
		case bytes.HasPrefix(line, []byte("created by ")):
			s := string(line[len("created by "):])
			if i := strings.LastIndex(s, " in goroutine "); i >= 0 {
				g.parent, _ = strconv.ParseInt(s[i+len(" in goroutine "):], 10, 64)
				s = s[:i]
			}
			g.funcs = append(g.funcs, "created by "+s)
		default:
			f := line
			if i := bytes.LastIndexByte(f, '('); i > 0 {
				f = f[:i]
			}
			g.funcs = append(g.funcs, string(f))
		}
	}
	flush()
}
