package stacks

import (
	"fmt"
	"strconv"
	"strings"
)

// This file prints debug=2 dumps the way the Go runtime does
// (runtime/traceback.go: goroutineheader, traceback2, printcreatedby1,
// printAncestorTraceback, tracebacksomeothers), so that tests state the
// goroutines they mean and get the exact bytes the runtime would write.

// gHeader is what goroutineheader prints.
type gHeader struct {
	id int64
	// system prints " gp=0x... m=N mp=0x..." (GOTRACEBACK=system, or the
	// throwing goroutine); m < 0 prints " m=nil".
	system bool
	m      int
	// status is the wait reason or the status string ("running").
	status string
	leaked bool // " (leaked)", status _Gleaked
	scan   bool // " (scan)", the _Gscan bit
	// durable is the " (durable)" of a goroutine idle in a synctest bubble
	// whose wait reason does not already say so.
	durable bool
	// minutes is printed only from 1 on, as the runtime does.
	minutes int64
	locked  bool  // ", locked to thread"
	bubble  int64 // ", synctest bubble N" when > 0
	// labels print with GODEBUG=tracebacklabels=1, in this order.
	labels [][2]string
}

func (h gHeader) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "goroutine %d", h.id)
	if h.system {
		fmt.Fprintf(&b, " gp=0x%x", 0xc000002000+h.id*0x1c0)
		if h.m < 0 {
			b.WriteString(" m=nil")
		} else {
			fmt.Fprintf(&b, " m=%d mp=0x%x", h.m, 0xc000100000+h.m*0x1000)
		}
	}
	b.WriteString(" [" + h.status)
	if h.leaked {
		b.WriteString(" (leaked)")
	}
	if h.scan {
		b.WriteString(" (scan)")
	}
	if h.durable {
		b.WriteString(" (durable)")
	}
	if h.minutes >= 1 {
		fmt.Fprintf(&b, ", %d minutes", h.minutes)
	}
	if h.locked {
		b.WriteString(", locked to thread")
	}
	if h.bubble > 0 {
		fmt.Fprintf(&b, ", synctest bubble %d", h.bubble)
	}
	if len(h.labels) > 0 {
		b.WriteString(" labels:{")
		for i, kv := range h.labels {
			// The runtime's quoted() escapes like strconv.QuoteToASCII.
			b.WriteString(strconv.QuoteToASCII(kv[0]) + ": " + strconv.QuoteToASCII(kv[1]))
			if i < len(h.labels)-1 {
				b.WriteString(", ")
			}
		}
		b.WriteString("}")
	}
	b.WriteString("]:\n")
	return b.String()
}

// gFrame is one frame as traceback2 prints it.
type gFrame struct {
	fn   string
	args string // "..." for an inlined call
	file string
	line int
	off  uint64 // " +0x..", omitted when 0 (inlined, or pc at entry)
	// system adds " fp=0x.. sp=0x.. pc=0x.." (not on inlined frames).
	system bool
}

func (f gFrame) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(%s)\n\t%s:%d", f.fn, f.args, f.file, f.line)
	if f.off != 0 {
		fmt.Fprintf(&b, " +0x%x", f.off)
	}
	if f.system && f.args != "..." {
		fmt.Fprintf(&b, " fp=0x%x sp=0x%x pc=0x%x", 0xc0000a0f80, 0xc0000a0f60, 0x4a0000+f.off)
	}
	b.WriteString("\n")
	return b.String()
}

// gCreator is the "created by" trailer (printcreatedby1).
type gCreator struct {
	fn     string
	parent int64 // " in goroutine N" when > 0 (Go >= 1.21)
	file   string
	line   int
	off    uint64
}

func (c gCreator) String() string {
	if c.fn == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("created by " + c.fn)
	if c.parent > 0 {
		fmt.Fprintf(&b, " in goroutine %d", c.parent)
	}
	fmt.Fprintf(&b, "\n\t%s:%d", c.file, c.line)
	if c.off != 0 {
		fmt.Fprintf(&b, " +0x%x", c.off)
	}
	b.WriteString("\n")
	return b.String()
}

// gAncestor is one "[originating from goroutine N]:" block
// (GODEBUG=tracebackancestors=N).
type gAncestor struct {
	goid    int64
	frames  []gFrame // printed as "fn(...)"
	elided  bool     // "...additional frames elided..."
	creator gCreator // printed without " in goroutine"
}

// gDump is one goroutine of a debug=2 dump.
type gDump struct {
	header gHeader
	frames []gFrame
	// elided > 0 prints "...N frames elided..." after the first
	// elideAfter frames (Go >= 1.21: innermost 50, then outermost 50).
	elided     int
	elideAfter int
	// oldElided prints Go 1.20's "...additional frames elided..." after
	// all frames.
	oldElided   bool
	unavailable bool // "\tgoroutine running on other thread; stack unavailable"
	creator     gCreator
	ancestors   []gAncestor
}

func (g gDump) String() string {
	var b strings.Builder
	b.WriteString(g.header.String())
	if g.unavailable {
		b.WriteString("\tgoroutine running on other thread; stack unavailable\n")
	}
	for i, f := range g.frames {
		if g.elided > 0 && i == g.elideAfter {
			fmt.Fprintf(&b, "...%d frames elided...\n", g.elided)
		}
		b.WriteString(f.String())
	}
	if g.oldElided {
		b.WriteString("...additional frames elided...\n")
	}
	b.WriteString(g.creator.String())
	for _, a := range g.ancestors {
		fmt.Fprintf(&b, "[originating from goroutine %d]:\n", a.goid)
		for _, f := range a.frames {
			f.args = "..."
			b.WriteString(f.String())
		}
		if a.elided {
			b.WriteString("...additional frames elided...\n")
		}
		c := a.creator
		c.parent = 0
		b.WriteString(c.String())
	}
	return b.String()
}

// debug2 joins goroutines as runtime.Stack(buf, true) does: a blank line
// before every goroutine but the first.
func debug2(gs ...gDump) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.String()
	}
	return strings.Join(parts, "\n")
}

// Frames of the stuck watch of the real captures, reused by the tables.
var (
	frameSend = gFrame{
		fn: "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent", args: "0x24b5d9022270, 0x24b5dce786e0",
		file: "k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", line: 441, off: 0x107,
	}
	frameInterval = gFrame{
		fn: "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval", args: "0x24b5d9022270, {0x47505d8, 0x24b5dfff7380}, 0x24b5ddc0fba0, 0x0",
		file: "k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go", line: 502, off: 0x145,
	}
	creatorWatch = gCreator{
		fn: "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch", parent: 33855,
		file: "k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cacher.go", line: 688, off: 0x13e5,
	}
	framePark   = gFrame{fn: "runtime.gopark", args: "0x4a5b18?, 0xc000012345?, 0x0?, 0x0?, 0x0?", file: "runtime/proc.go", line: 462, off: 0xce}
	frameSelect = gFrame{fn: "runtime.selectgo", args: "0xc000071f28, 0xc000071f08, 0x0?, 0x0, 0x0?, 0x1", file: "runtime/select.go", line: 351, off: 0x837}
)

// want* are the parsed forms of the frames above.
func (f gFrame) want(args bool) Frame {
	out := Frame{Func: f.fn, File: f.file, Line: f.line}
	if args {
		out.Args = f.args
	}
	return out
}

func (c gCreator) want() Frame { return Frame{Func: c.fn, File: c.file, Line: c.line} }

func wantFrames(fs ...gFrame) []Frame {
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = f.want(true)
	}
	return out
}
