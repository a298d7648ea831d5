package dumpgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// DERIVED, NOT CAPTURED. The functions below rewrite a real v1.37.2
// capture's cacheWatcher goroutines into the shape k8s.io/apiserver
// v0.38.0-beta.0 gives them (its watcher loop was rewritten by upstream PR
// 141449), so that the classifier's reading of that shape is tested before
// a real v1.38 capture is. Everything but the watcher stacks stays as
// captured from v1.37.2; the result proves the classifier reads the 1.38
// frames, not that a 1.38 server shows them (the real capture,
// testdata/kube-apiserver-v1.38.0-beta.0, does). The stacks follow the
// v1.38 source (k8s.io/apiserver@v0.38.0-beta.0, and the btree it iterates,
// k8s.io/utils' forked btree, as the real capture names it):
//
//	initial, blocked sending (innermost first):
//	  (*cacheWatcher).sendWatchCacheEvent            cache_watcher.go:463 (the select)
//	  (*cacheWatcher).processInitialEvents-range1    cache_watcher.go:585
//	  (*lazySnapshotCacheIntervalSource).All.func1-range1  watch_cache_interval.go:270
//	  store.(*btreeStore).rangePrefix.func1.1        store/btree.go:112
//	  btree.(*node[...]).iterate                     btree.go:503
//	  btree.(*BTree[...]).AscendGreaterOrEqual       btree.go:740
//	  store.(*btreeStore).rangePrefix.func1          store/btree.go:108
//	  (*lazySnapshotCacheIntervalSource).All.func1   watch_cache_interval.go:265
//	  (*cacheWatcher).processInitialEvents           cache_watcher.go:554
//	  (*cacheWatcher).process                        cache_watcher.go:494
//	  created by (*Cacher).Watch                     cacher.go:561
//	streaming, waiting for events: process at cache_watcher.go:480;
//	streaming, sending: sendWatchCacheEvent <- processEvent (:632) <- process (:514).

// Version138 is the release the rewritten dumps claim.
const Version138 = "v0.38.0-beta.0"

// ShapeFrame is one frame of a goroutine stack: function, arguments as the
// runtime prints them (debug=2 only), file and line.
type ShapeFrame struct {
	Func, Args, File string
	Line             int
}

const (
	cacherPkg   = "k8s.io/apiserver/pkg/storage/cacher."
	mod137      = "k8s.io/apiserver@v0.37.2/"
	mod138      = "k8s.io/apiserver@" + Version138 + "/"
	watcherFile = mod138 + "pkg/storage/cacher/cache_watcher.go"
	btreePkg    = "k8s.io/utils/third_party/forked/golang/btree."
	btreeFile   = "k8s.io/utils@v0.0.0-20260626114624-be93311217bd/third_party/forked/golang/btree/btree.go"
)

// To138 returns the v0.38.0-beta.0 stack of a v1.37 cacheWatcher stack
// (innermost first, processInterval outermost), and false for any other
// stack.
func To138(frames []ShapeFrame) ([]ShapeFrame, bool) {
	n := len(frames)
	if n == 0 || frames[n-1].Func != cacherPkg+"(*cacheWatcher).processInterval" {
		return nil, false
	}
	iv := frames[n-1]
	recv, ctx, interval := splitTop(iv.Args)
	var out []ShapeFrame
	for _, f := range frames[:n-1] {
		if f.Func == cacherPkg+"(*cacheWatcher).process" {
			// Streaming: process is the goroutine's entry.
			if len(out) > 0 && out[len(out)-1].Func == cacherPkg+"(*cacheWatcher).sendWatchCacheEvent" {
				out = append(out, ShapeFrame{cacherPkg + "(*cacheWatcher).processEvent", recv + ", 0x0, 0x1", watcherFile, 632},
					ShapeFrame{cacherPkg + "(*cacheWatcher).process", recv + ", " + ctx, watcherFile, 514})
				return out, true
			}
			return append(out, ShapeFrame{cacherPkg + "(*cacheWatcher).process", recv + ", " + ctx, watcherFile, 480}), true
		}
		if f.Func == cacherPkg+"(*cacheWatcher).sendWatchCacheEvent" {
			f.File, f.Line = watcherFile, 463
		}
		out = append(out, f)
	}
	// Initial: the replay, under process.
	return append(out,
		ShapeFrame{cacherPkg + "(*cacheWatcher).processInitialEvents-range1", "0x0, 0x0", watcherFile, 585},
		ShapeFrame{cacherPkg + "(*lazySnapshotCacheIntervalSource).All.func1-range1", "0x0, 0x0", mod138 + "pkg/storage/cacher/watch_cache_interval.go", 270},
		ShapeFrame{"k8s.io/apiserver/pkg/storage/cacher/store.(*btreeStore).rangePrefix.func1.1", "0x0", mod138 + "pkg/storage/cacher/store/btree.go", 112},
		ShapeFrame{btreePkg + "(*node[...]).iterate", "0x0, 0x0", btreeFile, 503},
		ShapeFrame{btreePkg + "(*BTree[...]).AscendGreaterOrEqual", "0x0, 0x0", btreeFile, 740},
		ShapeFrame{"k8s.io/apiserver/pkg/storage/cacher/store.(*btreeStore).rangePrefix.func1", "0x0", mod138 + "pkg/storage/cacher/store/btree.go", 108},
		ShapeFrame{cacherPkg + "(*lazySnapshotCacheIntervalSource).All.func1", "0x0", mod138 + "pkg/storage/cacher/watch_cache_interval.go", 265},
		ShapeFrame{cacherPkg + "(*cacheWatcher).processInitialEvents", recv + ", " + interval, watcherFile, 554},
		ShapeFrame{cacherPkg + "(*cacheWatcher).process", recv + ", " + ctx, watcherFile, 494},
	), true
}

// splitTop splits processInterval's argument text ("0xrecv, {0xa, 0xb},
// 0xiv, 0x0") into the receiver, the context pair and the interval.
func splitTop(args string) (recv, ctx, interval string) {
	recv, rest, _ := strings.Cut(args, ", ")
	if strings.HasPrefix(rest, "{") {
		if end := strings.IndexByte(rest, '}'); end >= 0 {
			ctx, rest = rest[:end+1], strings.TrimPrefix(rest[end+1:], ", ")
		}
	}
	interval, _, _ = strings.Cut(rest, ", ")
	if ctx == "" {
		ctx = "{0x0, 0x0}"
	}
	return recv, ctx, interval
}

// Debug2To138 rewrites every cacheWatcher goroutine of a v1.37 debug=2
// dump to the v0.38.0-beta.0 shape (To138), and names the module
// k8s.io/apiserver@v0.38.0-beta.0 in every file path; the other goroutines
// are left as they are.
func Debug2To138(dump []byte) ([]byte, error) {
	var out bytes.Buffer
	for _, stanza := range bytes.SplitAfter(dump, []byte("\n\n")) {
		s := string(stanza)
		if !strings.Contains(s, "(*cacheWatcher).processInterval(") {
			out.WriteString(strings.ReplaceAll(s, mod137, mod138))
			continue
		}
		r, err := watcherStanza138(s)
		if err != nil {
			return nil, err
		}
		out.WriteString(r)
	}
	return out.Bytes(), nil
}

// watcherStanza138 rewrites one debug=2 watcher goroutine.
func watcherStanza138(s string) (string, error) {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var frames []ShapeFrame
	i := 1
	for ; i+1 < len(lines) && !strings.HasPrefix(lines[i], "created by "); i += 2 {
		open := strings.LastIndexByte(lines[i], '(')
		if open < 0 {
			return "", fmt.Errorf("dumpgen: a frame without arguments in %q", lines[i])
		}
		fn, args := lines[i][:open], strings.TrimSuffix(lines[i][open+1:], ")")
		frames = append(frames, ShapeFrame{Func: fn, Args: args, File: strings.TrimSpace(lines[i+1])})
	}
	if i+1 >= len(lines) {
		return "", fmt.Errorf("dumpgen: a watcher goroutine without its creator: %q", lines[0])
	}
	to, ok := To138(frames)
	if !ok {
		return "", fmt.Errorf("dumpgen: %q is no v1.37 watcher stack", lines[0])
	}
	var b strings.Builder
	b.WriteString(lines[0] + "\n")
	for _, f := range to {
		loc := f.File // kept frames carry "file:line +0x..." as captured
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d +0x1a", f.File, f.Line)
		}
		fmt.Fprintf(&b, "%s(%s)\n\t%s\n", f.Func, f.Args, strings.ReplaceAll(loc, mod137, mod138))
	}
	creator := strings.Replace(lines[i+1], mod137+"pkg/storage/cacher/cacher.go:688", mod138+"pkg/storage/cacher/cacher.go:561", 1)
	b.WriteString(lines[i] + "\n" + creator + "\n")
	return b.String() + strings.Repeat("\n", len(s)-len(strings.TrimRight(s, "\n"))-1), nil
}

// Debug1To138 is Debug2To138 for a debug=1 profile: each stack holding
// processInterval gets the v0.38.0-beta.0 frames, with program counters of
// its own (the profile's addresses mean nothing across builds).
func Debug1To138(profile []byte) ([]byte, error) {
	var out bytes.Buffer
	for _, stanza := range bytes.SplitAfter(profile, []byte("\n\n")) {
		s := string(stanza)
		if !strings.Contains(s, "(*cacheWatcher).processInterval+") {
			out.WriteString(strings.ReplaceAll(s, mod137, mod138))
			continue
		}
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		count, _, _ := strings.Cut(lines[0], " @ ")
		var frames []ShapeFrame
		for _, l := range lines[1:] {
			fields := strings.Split(strings.TrimPrefix(l, "#\t"), "\t")
			var nonEmpty []string
			for _, f := range fields {
				if f != "" {
					nonEmpty = append(nonEmpty, f)
				}
			}
			if len(nonEmpty) != 3 {
				return nil, fmt.Errorf("dumpgen: unexpected debug=1 frame %q", l)
			}
			fn, _, _ := strings.Cut(nonEmpty[1], "+0x")
			frames = append(frames, ShapeFrame{Func: fn, File: nonEmpty[2]})
		}
		to, ok := To138(frames)
		if !ok {
			return nil, fmt.Errorf("dumpgen: %q is no v1.37 watcher stack", lines[0])
		}
		var b strings.Builder
		b.WriteString(count + " @")
		for k := range to {
			fmt.Fprintf(&b, " 0x%x", 0x2800000+k*0x10)
		}
		b.WriteString("\n")
		for k, f := range to {
			loc := f.File
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", f.File, f.Line)
			}
			fmt.Fprintf(&b, "#\t0x%x\t%s+0x1a\t%s\n", 0x2800000+k*0x10-1, f.Func, strings.ReplaceAll(loc, mod137, mod138))
		}
		out.WriteString(b.String() + strings.Repeat("\n", len(s)-len(strings.TrimRight(s, "\n"))-1))
	}
	return out.Bytes(), nil
}

// ProfileTo138 is Debug2To138 for a protobuf goroutine profile (the
// gzipped profile.proto of debug=0): each sample holding processInterval
// gets one location per frame of the v0.38.0-beta.0 stack.
func ProfileTo138(gz []byte) ([]byte, error) {
	p, err := profile.Parse(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("dumpgen: %w", err)
	}
	funcs := map[string]*profile.Function{}
	fn := func(name, file string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: file}
		p.Function = append(p.Function, f)
		funcs[name] = f
		return f
	}
	for _, f := range p.Function {
		f.Filename = strings.ReplaceAll(f.Filename, mod137, mod138)
		funcs[f.Name] = f
	}
	for _, s := range p.Sample {
		var frames []ShapeFrame
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				frames = append(frames, ShapeFrame{Func: l.Function.Name, File: l.Function.Filename, Line: int(l.Line)})
			}
		}
		// Runtime frames sit above the watcher's own in a profile.
		k := 0
		for k < len(frames) && strings.HasPrefix(frames[k].Func, "runtime.") {
			k++
		}
		to, ok := To138(frames[k:])
		if !ok {
			continue
		}
		locs := append([]*profile.Location(nil), s.Location[:countLocs(s.Location, k)]...)
		for _, f := range to {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: 0x2800000 + uint64(len(p.Location))*0x10,
				Line: []profile.Line{{Function: fn(f.Func, f.File), Line: int64(f.Line)}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		s.Location = locs
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		return nil, fmt.Errorf("dumpgen: %w", err)
	}
	return out.Bytes(), nil
}

// countLocs is how many of locs hold the first n frames (lines).
func countLocs(locs []*profile.Location, n int) int {
	seen := 0
	for i, loc := range locs {
		if seen >= n {
			return i
		}
		seen += len(loc.Line)
	}
	return len(locs)
}
