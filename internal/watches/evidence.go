package watches

import (
	"strconv"
	"strings"
)

// Evidence that ties a watch handler goroutine to the request it serves,
// read from the frames the handler shows (k8s.io/apiserver v0.37.2; the
// functions are rows of the release tables, shapes.go):
//   - response.go:183, doEncode(obj runtime.Object, event watch.Event, w
//     io.Writer): its first argument after the receiver is the object
//     being encoded, printed as the interface pair {itab, data}
//     (roleDoEncode);
//   - the writers the encoded event passes through unchanged below
//     doEncode's w.Write(e.eventBuffer.Bytes()) (response.go:201): the
//     metrics recorder (watch.go:232, which counts what it wrote as the
//     event's size, watch.go:240), the length-delimited framer of protobuf
//     streams (framer.go:46; it then writes a 4-byte header of its own, so
//     nothing above it is read: roleFramerWrite), and for JSON, whose
//     framer is the writer itself (json.go:326), the response writer and
//     its gzip or plain writer (watch.go:349, 285, 258) (roleEventWriter).

// The transports a watch handler is served over (api.Handler.Transport),
// as handlerTransport reads them from its frames.
const (
	TransportHTTP2      = "http2"
	TransportHTTP11     = "http/1.1"
	TransportWebsockets = "websocket"
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
func objectType(above stack) string {
	for i, f := range above.frames {
		if above.roles[i] != roleDoEncode {
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
func eventBytes(above stack) int {
	enc, _ := above.has(roleDoEncode)
	for i := enc - 1; i >= 0; i-- {
		framer := above.roles[i] == roleFramerWrite
		if !framer && above.roles[i] != roleEventWriter {
			return 0
		}
		if n := sliceLen(above.frames[i].Args); n > 0 {
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
func connAddress(st stack) string {
	for i, f := range st.frames {
		if r := st.roles[i]; r == roleWriteData || r == roleH1ConnServe {
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
func handlerTransport(st stack, h2 bool) string {
	if h2 {
		return TransportHTTP2
	}
	for i, f := range st.frames {
		// Its callers resolved the frames: names are canonical.
		if st.roles[i] == roleWatchServe && f.Func == fnWatchHandleWS {
			return TransportWebsockets
		}
	}
	return TransportHTTP11
}
