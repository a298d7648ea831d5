// Package probe reads the API server's debug endpoints the way the smoke test
// needs them: goroutine dumps (debug=2) and APF request dumps. It is the
// e2e suite's own small, independent oracle, so the suite can check the
// reproduction without the plugin (and, later, check the plugin against it).
package probe

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
)

// Goroutine is one goroutine of a debug=2 dump.
type Goroutine struct {
	ID int
	// State is the wait reason or status, e.g. "select", "IO wait".
	State string
	// WaitMinutes is the "N minutes" of the header; the runtime prints it
	// only for waits of a minute or more, so 0 means "under a minute".
	WaitMinutes int
	// Functions are the frames' function names, innermost first, without
	// arguments, e.g. "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval".
	Functions []string
	// CreatedBy is the function of the "created by" line, if any, and
	// ParentID the goroutine it names ("in goroutine N"), 0 if none.
	CreatedBy string
	ParentID  int
	// Event is the event argument of a sendWatchCacheEvent frame (its
	// second word, after the receiver), "" when there is none: the same
	// value in two dumps means the watcher sent nothing in between.
	Event string
}

var headerRE = regexp.MustCompile(`^goroutine (\d+)(?: [^\[]*)? \[(.*)\]:$`)

// ParseGoroutines parses the text of /debug/pprof/goroutine?debug=2.
func ParseGoroutines(dump string) ([]Goroutine, error) {
	var out []Goroutine
	var cur *Goroutine
	sc := bufio.NewScanner(strings.NewReader(dump))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			cur = nil
		case strings.HasPrefix(line, "goroutine "):
			m := headerRE.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("malformed goroutine header %q", line)
			}
			id, _ := strconv.Atoi(m[1])
			g := Goroutine{ID: id}
			for i, part := range strings.Split(m[2], ", ") {
				if i == 0 {
					g.State = part
					continue
				}
				if n, ok := strings.CutSuffix(part, " minutes"); ok {
					g.WaitMinutes, _ = strconv.Atoi(n)
				}
			}
			out = append(out, g)
			cur = &out[len(out)-1]
		case cur == nil, strings.HasPrefix(line, "\t"):
			// file:line of the previous frame, or text outside a goroutine.
		case strings.HasPrefix(line, "created by "):
			fn := strings.TrimPrefix(line, "created by ")
			if i := strings.Index(fn, " in goroutine "); i >= 0 {
				cur.ParentID, _ = strconv.Atoi(fn[i+len(" in goroutine "):])
				fn = fn[:i]
			}
			cur.CreatedBy = fn
		default:
			if i := strings.LastIndex(line, "("); i > 0 && strings.HasSuffix(line, ")") {
				args := strings.Split(line[i+1:len(line)-1], ", ")
				line = line[:i]
				if strings.HasSuffix(line, SendWatchCacheEvent) && len(args) >= 2 {
					cur.Event = args[1]
				}
			}
			cur.Functions = append(cur.Functions, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no goroutine in dump (%d bytes)", len(dump))
	}
	return out, nil
}

// Calls reports whether the goroutine's stack has a frame whose function ends
// with callee, called directly from a function ending with caller.
func (g Goroutine) Calls(caller, callee string) bool {
	for i := 0; i+1 < len(g.Functions); i++ {
		if strings.HasSuffix(g.Functions[i], callee) && strings.HasSuffix(g.Functions[i+1], caller) {
			return true
		}
	}
	return false
}

// String renders the goroutine's header the way the runtime prints it.
func (g Goroutine) String() string {
	if g.WaitMinutes > 0 {
		return fmt.Sprintf("goroutine %d [%s, %d minutes]", g.ID, g.State, g.WaitMinutes)
	}
	return fmt.Sprintf("goroutine %d [%s]", g.ID, g.State)
}

// The functions of kubernetes issue 131721: the cacher's sender and, on the
// other side of c.result, the HTTP/2 handler blocked on flow control.
//
// The initial replay runs in processInterval up to k8s.io/apiserver v0.37
// (v0.37.2 cache_watcher.go: the send blocks at :442, called at :502), and
// from v0.38 in processInitialEvents (v0.38.0-beta.0 cache_watcher.go:528),
// called by process for the interval it reads from c.input (:494), which
// ranges over cacheInterval.All() and sends from its loop body (:585; the
// send blocks at :464), a range-over-func closure the runtime names
// processInitialEvents-range1.
const (
	ProcessInterval      = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval"
	ProcessInitialEvents = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInitialEvents"
	SendWatchCacheEvent  = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent"
	// CacheWatcherProcess is the watcher's loop over live events; up to
	// v0.37 processInterval calls it once the interval is replayed
	// (v0.37.2 cache_watcher.go:552).
	CacheWatcherProcess  = "k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).process"
	WriteDataFromHandler = "golang.org/x/net/http2.(*serverConn).writeDataFromHandler"
	// StdWriteDataFromHandler is the same wait in the HTTP/2 server that
	// Go 1.27's net/http carries itself, which kube-apiserver v1.38 (built
	// with Go 1.27) serves with instead of golang.org/x/net/http2.
	StdWriteDataFromHandler = "net/http/internal/http2.(*serverConn).writeDataFromHandler"
)

// IsWriteDataFromHandler reports whether fn is an HTTP/2 handler's wait for
// flow control, in golang.org/x/net/http2 or in net/http's own HTTP/2.
func IsWriteDataFromHandler(fn string) bool {
	return fn == WriteDataFromHandler || fn == StdWriteDataFromHandler
}

// BlockedIn returns the goroutines whose innermost frame is fn.
func BlockedIn(gs []Goroutine, fn string) []Goroutine {
	var out []Goroutine
	for _, g := range gs {
		if len(g.Functions) > 0 && g.Functions[0] == fn {
			out = append(out, g)
		}
	}
	return out
}

// InitialEventsSenders returns the goroutines blocked sending initial events
// to a watcher: sendWatchCacheEvent called from processInterval (up to
// v1.37), or with processInitialEvents below it (v1.38: called from its
// range loop body, through the watch cache interval's iterator).
func InitialEventsSenders(gs []Goroutine) []Goroutine {
	var out []Goroutine
	for _, g := range gs {
		if g.Calls(ProcessInterval, SendWatchCacheEvent) || g.sendsUnder(ProcessInitialEvents) {
			out = append(out, g)
		}
	}
	return out
}

// InitialEventsWatchers returns the watcher goroutines still replaying
// initial events, whether blocked sending or between two sends: in
// processInterval but not yet in process (up to v1.37), or in
// processInitialEvents (v1.38). A paced client's watcher is blocked in
// sendWatchCacheEvent almost all the time, but a dump can catch it taking
// the interval's next event (v0.37.2 cache_watcher.go:480), which
// InitialEventsSenders does not count.
func InitialEventsWatchers(gs []Goroutine) []Goroutine {
	var out []Goroutine
	for _, g := range gs {
		inInterval := slices.Contains(g.Functions, ProcessInterval) && !slices.Contains(g.Functions, CacheWatcherProcess)
		if inInterval || slices.Contains(g.Functions, ProcessInitialEvents) {
			out = append(out, g)
		}
	}
	return out
}

// sendsUnder reports whether the goroutine is in sendWatchCacheEvent with a
// frame of exactly fn somewhere below it.
func (g Goroutine) sendsUnder(fn string) bool {
	i := slices.IndexFunc(g.Functions, func(f string) bool { return f == SendWatchCacheEvent })
	return i >= 0 && slices.Contains(g.Functions[i+1:], fn)
}

// GoroutineDump fetches /debug/pprof/goroutine?debug=2 through c (a
// clientset's RESTClient, or its Discovery().RESTClient()).
func GoroutineDump(ctx context.Context, c rest.Interface) (string, error) {
	b, err := c.Get().AbsPath("/debug/pprof/goroutine").Param("debug", "2").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("GET /debug/pprof/goroutine?debug=2: %w", err)
	}
	return string(b), nil
}
