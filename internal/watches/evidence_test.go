package watches

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// FuzzObjectType feeds argument text to the doEncode reader: it must never
// panic, and return either nothing or one certain hex word.
func FuzzObjectType(f *testing.F) {
	// Seeds: every doEncode argument text of the real captures.
	addRealArgs(f, regexp.MustCompile(`\(\*watchEncoder\)\.doEncode\((.*)\)\n`))
	f.Add("0x1, {0x2?, 0x3}, {{...}}")
	f.Add("{{{")
	f.Add("}, }, {")
	f.Fuzz(func(t *testing.T, args string) {
		got := objectType(stackOfFrames([]stacks.Frame{{Func: fnDoEncode, Args: args}}))
		if got != "" && (!strings.HasPrefix(got, "0x") || strings.ContainsAny(got, "?,{} ")) {
			t.Fatalf("objectType(%q) = %q: want \"\" or one certain hex word", args, got)
		}
		for _, a := range splitArgs(args) {
			if a != strings.TrimSpace(a) {
				t.Fatalf("splitArgs(%q) kept spaces around %q", args, a)
			}
		}
	})
}

// addRealArgs seeds f with the first group of every match of re in the
// goroutine dumps of the real captures (seed-repro t1 and t2).
func addRealArgs(f *testing.F, re *regexp.Regexp) {
	for _, dir := range []string{"t1", "t2"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", dir, "goroutine-debug2.txt"))
		if err != nil {
			f.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			f.Add(string(m[1]))
		}
	}
}

func TestObjectTypeOnTheRealCapture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d := collect(t, string(b))
	types := map[string]int{}
	for _, w := range d.Watchers {
		if w.Phase == api.PhaseInitial && w.Handler != nil {
			types[w.Handler.ObjectType+" "+w.Handler.Transport]++
		}
	}
	// Both initial-phase pod watches are blocked writing, over HTTP/2,
	// encoding the same pod type.
	if types["0x472a248 http2"] != 2 || len(types) != 1 {
		t.Errorf("initial-phase handlers by object type and transport = %v, want 2 x 0x472a248 http2", types)
	}
}

// The handlers of the real capture: the event each writes (the framer's
// argument: 0x5274 bytes, a 20 KB pod) and its connection.
func TestHandlerWritesOnTheRealCapture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d := collect(t, string(b))
	type hw struct {
		ID, Conn   int64
		Bytes, N   int
		Addr, Type string
	}
	var got []hw
	for _, w := range d.Watchers {
		if h := w.Handler; w.Phase == api.PhaseInitial && h != nil {
			got = append(got, hw{h.GoroutineID, h.ConnGoroutineID, h.EventBytes, h.ConnWatches, h.ConnAddress, h.ObjectType})
		}
	}
	want := []hw{
		{33542, 33539, 21108, 1, "0x24b5db8c3a40", "0x472a248"},
		{33855, 33847, 21108, 1, "0x24b5dddfeb40", "0x472a248"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("initial-phase handlers (-want +got):\n%s", diff)
	}
}

// FuzzWriteArgs feeds argument text to the readers of a writer's []byte
// length and a connection's address: never a panic, a length only from a
// certain word, an address only as one certain hex word.
func FuzzWriteArgs(f *testing.F) {
	addRealArgs(f, regexp.MustCompile(`(?m)^(?:k8s\.io/\S+\.\(\*(?:watchEventMetricsRecorder|lengthDelimitedFrameWriter|watchResponseWriter|perFlushGzipWriter)\)\.Write|compress/gzip\.\(\*Writer\)\.Write|golang\.org/x/net/http2\.\(\*serverConn\)\.writeDataFromHandler)\((.*)\)$`))
	f.Add("0x1, {0x2, 0xffffffffffffffff, 0x3}")
	f.Add("0x1, {0x2, 0x5274?, 0x5500}")
	f.Fuzz(func(t *testing.T, args string) {
		n := eventBytes(stackOfFrames([]stacks.Frame{{Func: fnFramerWrite, Args: args}, {Func: fnDoEncode}}))
		if n < 0 {
			t.Fatalf("eventBytes(%q) = %d", args, n)
		}
		if n > 0 {
			sl := splitArgs(strings.TrimSuffix(strings.TrimPrefix(splitArgs(args)[1], "{"), "}"))
			v, err := strconv.ParseInt(strings.TrimPrefix(sl[1], "0x"), 16, 64)
			if len(sl) != 3 || !strings.HasPrefix(sl[1], "0x") || err != nil || int(v) != n {
				t.Fatalf("eventBytes(%q) = %d, not the slice's certain length word", args, n)
			}
		}
		a := connAddress(stackOfFrames([]stacks.Frame{{Func: fnWriteDataFromH, Args: args}}))
		if a != "" && (!isHexWord(a) || !strings.HasPrefix(strings.TrimSpace(args), a)) {
			t.Fatalf("connAddress(%q) = %q", args, a)
		}
	})
}
