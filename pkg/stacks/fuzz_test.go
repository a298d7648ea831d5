package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// Fuzz targets for the three parsers. Run one with
//
//	go test ./pkg/stacks -run '^$' -fuzz '^FuzzScanner$' -fuzztime 60s
//
// Seeds come from the real captures (cut where the stuck watch is) and from
// the dumps the unit tests generate.

// fixtureSeeds returns parts of a real capture: its head and the lines
// around the first occurrence of around.
func fixtureSeeds(f *testing.F, capture, name, around string) [][]byte {
	f.Helper()
	b, err := os.ReadFile(golden.Fixture(capture, name))
	if err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{b[:min(len(b), 64<<10)]}
	if i := bytes.Index(b, []byte(around)); i >= 0 {
		lo, hi := max(0, i-4<<10), min(len(b), i+12<<10)
		seeds = append(seeds, b[lo:hi])
	}
	return seeds
}

// crafted are generated debug=2 dumps of every variant the tables cover.
func craftedDebug2() []string {
	stuck := []gFrame{frameSend, frameInterval}
	sys := func(f gFrame) gFrame { f.system = true; return f }
	return []string{
		debug2(
			gDump{header: gHeader{id: 33988, status: "select", minutes: 2}, frames: stuck, creator: creatorWatch},
			gDump{header: gHeader{id: 2, status: "chan receive", locked: true, scan: true}, frames: stuck},
			gDump{header: gHeader{id: 3, system: true, m: -1, status: "select", labels: [][2]string{{"k", "v, w"}}},
				frames: []gFrame{sys(framePark), sys(frameSelect), sys(frameSend)}, creator: creatorWatch},
			gDump{header: gHeader{id: 4, status: "chan receive (durable)", bubble: 1, leaked: true}, frames: stuck},
			gDump{header: gHeader{id: 5, status: "running"}, unavailable: true, creator: creatorWatch},
		),
		debug2(gDump{header: gHeader{id: 6, status: "running"}, frames: deepStack(6), elided: 99, elideAfter: 3, creator: creatorWatch}),
		debug2(gDump{header: gHeader{id: 7, status: "select"}, frames: deepStack(3), oldElided: true, creator: gCreator{fn: "main.f", file: "f.go", line: 1}}),
		ancestorDump(),
		strings.ReplaceAll(debug2(gDump{header: gHeader{id: 8, status: "IO wait", minutes: 9}, frames: stuck, creator: creatorWatch}), "\n", "\r\n"),
		"goroutine 1 [select]:\nmain.f()\n\tmain.go:1\n\ngoroutine x [select]:\njunk\n\ngoroutine 3 [select]:\nmain.f()\n",
		"goroutine 99999999999999999999 [select, 99999999999999999999 minutes]:\nmain.f()\n\tC:/x y/main.go:99999999999999999999 +0x1\n",
		"goroutine 1 [select]:\nmain.f()\n\tmain.go:1 +0x1\ncreated by main.g in goroutine 2",
		"",
		"\n",
	}
}

// checkSkipped checks the invariants of a skip log against the lines read.
func checkSkipped(t *testing.T, count int, kept []Skipped, lines int) {
	t.Helper()
	if count < len(kept) || len(kept) > maxSkippedKept {
		t.Fatalf("SkippedLines %d with %d kept (max %d)", count, len(kept), maxSkippedKept)
	}
	for _, s := range kept {
		if s.Line < 1 || s.Line > lines {
			t.Fatalf("skipped line %d outside the %d lines read: %v", s.Line, lines, s)
		}
	}
}

// scanResult is everything a Scanner returned, for comparisons.
type scanResult struct {
	gs    []*Goroutine
	stats Stats
	err   error
	// chunks parsed by a parallel scan's workers and used.
	parallelChunks int
}

// With skipArgs the scan also sets KeepArgs (keepSome) and SkipFiles.
func scan(data []byte, skipArgs bool) scanResult {
	sc := NewScanner(bytes.NewReader(data))
	sc.SkipArgs = skipArgs
	if skipArgs {
		sc.KeepArgs, sc.SkipFiles = keepSome, true
	}
	var r scanResult
	for sc.Next() {
		r.gs = append(r.gs, sc.Goroutine().Clone())
	}
	r.stats, r.err = sc.Stats(), sc.Err()
	return r
}

// keepSome is a KeepArgs for the fuzz loop: a rule of the name alone.
func keepSome(fn string) bool { return len(fn)%3 == 0 }

// sameGoroutines is a fast cmp.Equal with cmpopts.EquateEmpty, for the
// fuzz loop.
func sameGoroutines(a, b []*Goroutine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := *a[i], *b[i]
		if !slices.Equal(x.Frames, y.Frames) || !slices.Equal(x.Flags, y.Flags) || !maps.Equal(x.Labels, y.Labels) {
			return false
		}
		x.Frames, x.Flags, x.Labels, y.Frames, y.Flags, y.Labels = nil, nil, nil, nil, nil, nil
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func FuzzScanner(f *testing.F) {
	for _, c := range captures {
		for _, s := range fixtureSeeds(f, c, "goroutine-debug2.txt", "goroutine 33988 ") {
			f.Add(s, uint16(0))
		}
	}
	for _, s := range craftedDebug2() {
		f.Add([]byte(s), uint16(0))
	}
	f.Add([]byte(craftedDebug2()[0]), uint16(100))
	f.Fuzz(func(t *testing.T, data []byte, ioErrAt uint16) {
		r := scan(data, false)
		st := r.stats

		// Errors: a *SyntaxError, or "empty input" for empty input.
		var se *SyntaxError
		switch {
		case r.err == nil:
		case errors.As(r.err, &se):
			if se.Line() < 1 || se.Line() > st.Lines+1 {
				t.Fatalf("SyntaxError at line %d after %d lines read: %v", se.Line(), st.Lines, r.err)
			}
		case len(data) == 0 && strings.Contains(r.err.Error(), "empty input"):
		default:
			t.Fatalf("Err() = %T %v, want nil or a *SyntaxError", r.err, r.err)
		}

		// Counts.
		headers := 0
		for _, line := range bytes.Split(data, []byte("\n")) {
			if bytes.HasPrefix(line, goroutinePrefix) {
				headers++
			}
		}
		if len(r.gs) != st.Goroutines || st.Goroutines > headers {
			t.Fatalf("%d goroutines returned, Stats says %d, input has %d header lines", len(r.gs), st.Goroutines, headers)
		}
		if st.Lines > bytes.Count(data, []byte("\n"))+1 || st.Bytes > int64(len(data)) || st.WithParentID > st.CreatedBy {
			t.Fatalf("stats %+v for %d lines, %d bytes", st, bytes.Count(data, []byte("\n"))+1, len(data))
		}
		checkSkipped(t, st.SkippedLines, st.Skipped, st.Lines)
		prev := 0
		for _, g := range r.gs {
			if g.Line <= prev || g.Line > st.Lines || g.State == "" || g.ID < 0 || g.WaitMinutes < 0 {
				t.Fatalf("goroutine %+v (previous header at line %d, %d lines read)", g, prev, st.Lines)
			}
			prev = g.Line
			if c := g.Clone(); !sameGoroutines([]*Goroutine{g}, []*Goroutine{c}) {
				t.Fatalf("Clone differs from the goroutine (-orig +clone):\n%s", cmp.Diff(g, c, cmpopts.EquateEmpty()))
			}
		}

		// SkipArgs (with KeepArgs) and SkipFiles change nothing but the
		// arguments of the frames KeepArgs does not keep and the file
		// paths, and CRLF line endings read the same (one scan checks
		// all: each costs a 1 MiB buffer).
		stripped := make([]*Goroutine, len(r.gs))
		for i, g := range r.gs {
			c := g.Clone()
			for j := range c.Frames {
				if !keepSome(c.Frames[j].Func) {
					c.Frames[j].Args = ""
				}
				c.Frames[j].File = ""
			}
			c.CreatedBy.File = ""
			stripped[i] = c
		}
		variant, name := data, "SkipArgs"
		if !bytes.ContainsRune(data, '\r') && len(data) < MaxLineBytes/2 {
			variant, name = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), "SkipArgs and CRLF"
		}
		other := scan(variant, true)
		other.stats.Bytes = st.Bytes
		if !sameGoroutines(stripped, other.gs) || !reflect.DeepEqual(st, other.stats) || fmt.Sprint(r.err) != fmt.Sprint(other.err) {
			t.Fatalf("%s changed more than arguments (-want +got):\n%s%s\nerrors %v, %v", name,
				cmp.Diff(stripped, other.gs, cmpopts.EquateEmpty()), cmp.Diff(st, other.stats), r.err, other.err)
		}

		// The parallel scan (Workers) reads the same, in chunks of any size.
		chunk := 32 + int(ioErrAt)%4096
		checkSame(t, fmt.Sprintf("2 workers, chunk %d", chunk), r, scanWith(bytes.NewReader(data), 2, chunk, false))

		// An I/O error surfaces, wrapped, unless a syntax error came first.
		if int(ioErrAt) > 0 && int(ioErrAt) < len(data) {
			errIO := errors.New("fuzz: I/O error")
			seq := scanWith(&errReader{data: string(data[:ioErrAt]), err: errIO}, 0, 0, false)
			checkSame(t, fmt.Sprintf("I/O error after %d bytes, 2 workers, chunk %d", ioErrAt, chunk), seq,
				scanWith(&errReader{data: string(data[:ioErrAt]), err: errIO}, 2, chunk, false))
			sc := NewScanner(&errReader{data: string(data[:ioErrAt]), err: errIO})
			n := 0
			for sc.Next() {
				n++
			}
			err := sc.Err()
			if !errors.Is(err, errIO) && !errors.As(err, &se) {
				t.Fatalf("with an I/O error after %d bytes: Err() = %v", ioErrAt, err)
			}
			if n > len(r.gs) {
				t.Fatalf("%d goroutines before the I/O error, %d in the whole input", n, len(r.gs))
			}
		}
	})
}

func FuzzParseDebug1(f *testing.F) {
	for _, c := range captures {
		for _, s := range fixtureSeeds(f, c, "goroutine-debug1.txt", "sendWatchCacheEvent") {
			f.Add(s)
		}
	}
	f.Add([]byte(debug1(-1,
		d1Stack{count: 2, labels: [][2]string{{"k", "v, w"}}, frames: []d1Frame{d1Send, d1Interval}},
		d1Stack{count: 1, frames: []d1Frame{{pc: 0x1234}, d1Short}},
	)))
	f.Add([]byte(debug1(7, d1Stack{count: 1, frames: []d1Frame{d1Short}})))
	f.Add([]byte("goroutine profile: total 1\n#\t0x1\tf+0x1\tf.go:1\n1 @ 0x1\n# labels: {\"k\":\"v\"}\nx @\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseDebug1(bytes.NewReader(data))
		lines := bytes.Count(data, []byte("\n")) + 1
		if err != nil {
			var se *SyntaxError
			if a != nil || !(errors.As(err, &se) && se.Line() >= 1 && se.Line() <= lines || len(data) == 0) {
				t.Fatalf("ParseDebug1 = %v, %T %v", a, err, err)
			}
			return
		}
		sum := 0
		for _, s := range a.Stacks {
			if s.Count < 0 || s.Count > 1<<40 {
				t.Fatalf("stack count %d", s.Count)
			}
			sum += s.Count
		}
		if a.Total < 0 || (sum != a.Total && a.SkippedLines == 0) {
			t.Fatalf("Total %d, counts add up to %d, nothing skipped", a.Total, sum)
		}
		checkSkipped(t, a.SkippedLines, a.Skipped, lines)
		if !bytes.ContainsRune(data, '\r') && len(data) < 64<<10 {
			b, err := ParseDebug1(bytes.NewReader(bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))))
			if err != nil {
				t.Fatalf("CRLF input fails: %v", err)
			}
			if diff := cmp.Diff(a, b, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("CRLF input parses differently (-LF +CRLF):\n%s", diff)
			}
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	for _, c := range captures {
		b, err := os.ReadFile(golden.Fixture(c, "goroutine.pb.gz"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if c == "t2" {
			p, err := profile.ParseData(b)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(encode(f, p, false))
		}
	}
	send, park := frameSend.want(false), Frame{Func: "runtime.gopark", File: "runtime/proc.go", Line: 462}
	f.Add(encode(f, pbProfile(f, goroutineCount,
		pbSample{count: 3, labels: map[string][]string{"k": {"v"}}, locs: [][]Frame{{park}, {send, send}, {}}},
		pbSample{count: -1, locs: [][]Frame{{send}}},
	), false))
	f.Add(encode(f, pbProfile(f, []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}, pbSample{count: 1, locs: [][]Frame{{send}}}), false))
	f.Add([]byte(debug1(-1, d1Stack{count: 1, frames: []d1Frame{d1Send}})))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseProfile(bytes.NewReader(data))
		if err != nil {
			if a != nil {
				t.Fatalf("ParseProfile returned %v with error %v", a, err)
			}
			return
		}
		sum := 0
		for _, s := range a.Stacks {
			if s.Count < 0 || s.Count > 1<<40 {
				t.Fatalf("stack count %d", s.Count)
			}
			sum += s.Count
		}
		if sum != a.Total {
			t.Fatalf("Total %d, counts add up to %d", a.Total, sum)
		}
		if a.SkippedLines < len(a.Skipped) || len(a.Skipped) > maxSkippedKept {
			t.Fatalf("SkippedLines %d with %d kept", a.SkippedLines, len(a.Skipped))
		}
	})
}
