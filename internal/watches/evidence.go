package watches

import (
	"strconv"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Evidence that ties a watch handler goroutine to the request it serves,
// read from the frames the handler shows (k8s.io/apiserver v0.37.2).
const (
	// response.go:184, doEncode(obj runtime.Object, event watch.Event, w
	// io.Writer): its first argument after the receiver is the object
	// being encoded, printed as the interface pair {itab, data}.
	fnDoEncode = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchEncoder).doEncode"

	// The writers the encoded event passes through unchanged below
	// doEncode's w.Write(e.eventBuffer.Bytes()) (response.go:201): the
	// metrics recorder (watch.go:232, which counts what it wrote as the
	// event's size, watch.go:240), the length-delimited framer of protobuf
	// streams (framer.go:46; it then writes a 4-byte header of its own, so
	// nothing above it is read), and for JSON, whose framer is the writer
	// itself (json.go:326), the response writer and its gzip or plain
	// writer (watch.go:349, 285, 258).
	fnRecorderWrite = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchEventMetricsRecorder).Write"
	fnFramerWrite   = "k8s.io/apimachinery/pkg/util/framer.(*lengthDelimitedFrameWriter).Write"
	fnWatchRWWrite  = "k8s.io/apiserver/pkg/endpoints/handlers.(*watchResponseWriter).Write"
	fnGzipRWWrite   = "k8s.io/apiserver/pkg/endpoints/handlers.(*perFlushGzipWriter).Write"
	fnPlainRWWrite  = "k8s.io/apiserver/pkg/endpoints/handlers.(*plainResponseWriter).Write"
	fnGzipWrite     = "compress/gzip.(*Writer).Write"

	transportHTTP2      = "http2"
	transportHTTP11     = "http/1.1"
	transportWebsockets = "websocket"
)

// objectType returns the itab word of the object a watch handler is
// encoding, from its (*watchEncoder).doEncode frame: "" when the handler
// is not encoding (it waits for the watcher's next event) or the runtime
// marked the word as uncertain ('?').
//
// The itab is the pair (runtime.Object, concrete type), one per concrete
// type in a process: every handler serving one group/resource encodes the
// same type and prints the same word (pods 0x472a248 and configmaps
// 0x4729d48 in one capture of v1.37.2). The converse does not hold: all
// custom resources are *unstructured.Unstructured, and resources sharing
// an internal type share the word.
func objectType(frames []stacks.Frame) string {
	for _, f := range frames {
		if !is(f.Func, fnDoEncode) {
			continue
		}
		args := splitArgs(f.Args)
		if len(args) < 2 {
			return ""
		}
		iface := splitArgs(strings.TrimSuffix(strings.TrimPrefix(args[1], "{"), "}"))
		if len(iface) != 2 || !isHexWord(iface[0]) {
			return "" // not a pair, or a word the runtime was unsure of ("0x...?")
		}
		return iface[0]
	}
	return ""
}

// eventBytes returns the size of the event a watch handler is writing,
// read from the first writer below doEncode that printed its []byte
// argument for sure ({ptr, len, cap} without '?'): the size the handler
// records in apiserver_watch_events_sizes once the event is written in
// full. 0 when no such frame shows it. frames are innermost first.
func eventBytes(frames []stacks.Frame) int {
	enc := -1
	for i, f := range frames {
		if is(f.Func, fnDoEncode) {
			enc = i
			break
		}
	}
	for i := enc - 1; i >= 0; i-- {
		fn := frames[i].Func
		framer := is(fn, fnFramerWrite)
		if !framer && !is(fn, fnRecorderWrite) && !is(fn, fnWatchRWWrite) && !is(fn, fnGzipRWWrite) && !is(fn, fnPlainRWWrite) && !is(fn, fnGzipWrite) {
			return 0
		}
		if n := sliceLen(frames[i].Args); n > 0 {
			return n
		}
		if framer {
			return 0
		}
	}
	return 0
}

// sliceLen is the length of the []byte a pointer-receiver Write was called
// with ("0xrecv, {0xptr, 0x5274, 0x5500}"), 0 when it is not printed for
// sure.
func sliceLen(args string) int {
	as := splitArgs(args)
	if len(as) < 2 || !strings.HasPrefix(as[1], "{") {
		return 0
	}
	sl := splitArgs(strings.TrimSuffix(strings.TrimPrefix(as[1], "{"), "}"))
	if len(sl) != 3 || !isHexWord(sl[1]) || len(sl[1]) > 12 {
		return 0
	}
	n, err := strconv.ParseInt(sl[1][2:], 16, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return int(n)
}

// connAddress is the address of the connection a watch handler serves,
// when its frames print it: the *serverConn receiver of HTTP/2's
// writeDataFromHandler (x/net http2/server.go:1011), or the *conn receiver
// of net/http.(*conn).serve (net/http/server.go:1887), at the bottom of an
// HTTP/1.1 handler's stack. "" otherwise; the connection goroutine groups
// handlers all the same.
func connAddress(frames []stacks.Frame) string {
	for _, f := range frames {
		if is(f.Func, fnWriteDataFromH) || is(f.Func, fnBundledWriteDFH) || is(f.Func, fnH1ConnServe) {
			if as := splitArgs(f.Args); len(as) > 0 && isHexWord(as[0]) {
				return as[0]
			}
			return ""
		}
	}
	return ""
}

// isHexWord reports whether s is a word as the runtime prints it: "0x"
// and hex digits.
func isHexWord(s string) bool {
	if len(s) < 3 || !strings.HasPrefix(s, "0x") {
		return false
	}
	for _, c := range s[2:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// splitArgs splits a frame's argument text at its top-level commas:
// "0x1, {0x2, 0x3}, {{...}}" -> ["0x1", "{0x2, 0x3}", "{{...}}"].
func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// handlerTransport names the protocol a watch handler serves its client
// over: HTTP/2 handlers are started by serverConn.scheduleHandler and
// block in writeDataFromHandler; HTTP/1.1 handlers run on the
// connection's own goroutine and block in the socket write.
func handlerTransport(frames []stacks.Frame, h2 bool) string {
	if h2 {
		return transportHTTP2
	}
	for _, f := range frames {
		if is(f.Func, fnWatchHandleWS) {
			return transportWebsockets
		}
	}
	return transportHTTP11
}

// resourceKey is the group/resource an APF request names ("" without
// request details): requests of one group/resource are served by handlers
// showing the same object type.
func resourceKey(r apf.Request) string {
	if r.Resource == "" {
		return ""
	}
	return apiGroup(r.Path) + "/" + r.Resource
}

// apiGroup is the API group of a request path: "" for the core group
// (/api/v1/...), the segment after /apis/ otherwise.
func apiGroup(path string) string {
	rest, ok := strings.CutPrefix(path, "/apis/")
	if !ok {
		return ""
	}
	g, _, _ := strings.Cut(rest, "/")
	return g
}

// seenAt maps the initial-phase watchers of prev that are still in their
// initial phase in cur (same goroutine id, same *cacheWatcher when the
// dumps print it) to prev's capture time: their requests were executing
// then. nil without an earlier timed sample.
func seenAt(cur Sample, prev *Sample) map[int64]time.Time {
	if prev == nil || prev.Dump == nil || prev.CapturedAt.IsZero() || cur.CapturedAt.IsZero() || !prev.CapturedAt.Before(cur.CapturedAt) {
		return nil
	}
	before := make(map[int64]api.Watcher, len(prev.Dump.Watchers))
	for _, w := range prev.Dump.Watchers {
		if w.Phase == api.PhaseInitial {
			before[w.GoroutineID] = w
		}
	}
	out := map[int64]time.Time{}
	for _, w := range cur.Dump.Watchers {
		p, ok := before[w.GoroutineID]
		if !ok || w.Phase != api.PhaseInitial || (p.CacheWatcher != "" && w.CacheWatcher != "" && p.CacheWatcher != w.CacheWatcher) {
			continue
		}
		out[w.GoroutineID] = prev.CapturedAt
	}
	return out
}
