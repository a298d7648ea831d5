package stacks

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/pprof/profile"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// d1Frame is one frame of a debug=1 stack record; pc 0 with no function
// prints the runtime's unsymbolized form "#\t0x1234".
type d1Frame struct {
	pc   uint64
	fn   string
	off  uint64
	file string
	line int
}

type d1Stack struct {
	count  int
	labels [][2]string
	frames []d1Frame
}

// debug1 prints stacks the way runtime/pprof printCountProfile does with
// debug=1: through a tabwriter padding with tabs, the labels inside the
// "@" key, one "#\tPC\tfunc+0xOFF\tfile:line" line per frame and a blank
// line after each record. total < 0 prints the sum of the counts.
func debug1(total int, stacks ...d1Stack) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 1, 8, 1, '\t', 0)
	if total < 0 {
		total = 0
		for _, s := range stacks {
			total += s.count
		}
	}
	fmt.Fprintf(tw, "goroutine profile: total %d\n", total)
	for _, s := range stacks {
		key := "@"
		for _, f := range s.frames {
			key += fmt.Sprintf(" %#x", f.pc+1)
		}
		if len(s.labels) > 0 {
			kv := make([]string, len(s.labels))
			for i, l := range s.labels {
				kv[i] = fmt.Sprintf("%q:%q", l[0], l[1])
			}
			slices.Sort(kv)
			key += "\n# labels: {" + strings.Join(kv, ", ") + "}"
		}
		fmt.Fprintf(tw, "%d %s\n", s.count, key)
		for _, f := range s.frames {
			if f.fn == "" {
				fmt.Fprintf(tw, "#\t%#x\n", f.pc)
				continue
			}
			fmt.Fprintf(tw, "#\t%#x\t%s+%#x\t%s:%d\n", f.pc, f.fn, f.off, f.file, f.line)
		}
		fmt.Fprintf(tw, "\n")
	}
	tw.Flush()
	return b.String()
}

var (
	d1Send     = d1Frame{pc: 0x2745666, fn: frameSend.fn, off: 0x106, file: frameSend.file, line: 441}
	d1Interval = d1Frame{pc: 0x274628a, fn: frameInterval.fn, off: 0x144, file: frameInterval.file, line: 502}
	d1Short    = d1Frame{pc: 0x4ccb19, fn: "context.(*cancelCtx).propagateCancel.func2", off: 0x99, file: "context/context.go", line: 523}
)

func (f d1Frame) want() Frame {
	if f.fn == "" {
		return Frame{Func: fmt.Sprintf("?%#x", f.pc)}
	}
	return Frame{Func: f.fn, File: f.file, Line: f.line}
}

func TestParseDebug1(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Aggregated
	}{
		{
			name: "tabwriter-aligned frames",
			in: debug1(-1,
				d1Stack{count: 157, frames: []d1Frame{d1Short}},
				d1Stack{count: 2, frames: []d1Frame{d1Send, d1Interval, d1Short}},
			),
			want: &Aggregated{Total: 159, Stacks: []Stack{
				{Count: 157, Frames: []Frame{d1Short.want()}},
				{Count: 2, Frames: []Frame{d1Send.want(), d1Interval.want(), d1Short.want()}},
			}},
		},
		{
			name: "labels",
			in:   debug1(-1, d1Stack{count: 1, labels: [][2]string{{"user", "slow-informer"}, {"verb", "watch"}, {"a, b", `q"x":{}`}}, frames: []d1Frame{d1Send}}),
			want: &Aggregated{Total: 1, Stacks: []Stack{
				{Count: 1, Labels: map[string]string{"user": "slow-informer", "verb": "watch", "a, b": `q"x":{}`}, Frames: []Frame{d1Send.want()}},
			}},
		},
		{
			name: "labels with escapes",
			in:   debug1(-1, d1Stack{count: 3, labels: [][2]string{{"k\t", "v\n\x00é"}}, frames: []d1Frame{d1Short}}),
			want: &Aggregated{Total: 3, Stacks: []Stack{{Count: 3, Labels: map[string]string{"k\t": "v\n\x00é"}, Frames: []Frame{d1Short.want()}}}},
		},
		{
			name: "unsymbolized frame",
			in:   debug1(-1, d1Stack{count: 4, frames: []d1Frame{{pc: 0x7f00deadbeef}, d1Short}}),
			want: &Aggregated{Total: 4, Stacks: []Stack{{Count: 4, Frames: []Frame{{Func: "?0x7f00deadbeef"}, d1Short.want()}}}},
		},
		{
			name: "Windows path with spaces",
			in: debug1(-1, d1Stack{count: 1, frames: []d1Frame{
				{pc: 0x48f324, fn: "internal/poll.runtime_pollWait", off: 0x84, file: "C:/Program Files/Go/src/runtime/netpoll.go", line: 351},
			}}),
			want: &Aggregated{Total: 1, Stacks: []Stack{{Count: 1, Frames: []Frame{
				{Func: "internal/poll.runtime_pollWait", File: "C:/Program Files/Go/src/runtime/netpoll.go", Line: 351},
			}}}},
		},
		{
			name: "generic function names",
			in: debug1(-1, d1Stack{count: 1, frames: []d1Frame{
				{pc: 0x1, fn: "k8s.io/client-go/util/workqueue.(*Typed[go.shape.string]).Get", off: 0x8b, file: "queue.go", line: 282},
			}}),
			want: &Aggregated{Total: 1, Stacks: []Stack{{Count: 1, Frames: []Frame{
				{Func: "k8s.io/client-go/util/workqueue.(*Typed[go.shape.string]).Get", File: "queue.go", Line: 282},
			}}}},
		},
		{
			name: "header total differs from the stacks",
			in:   debug1(10, d1Stack{count: 4, frames: []d1Frame{d1Short}}),
			want: &Aggregated{Total: 10, Stacks: []Stack{{Count: 4, Frames: []Frame{d1Short.want()}}},
				SkippedLines: 1, Skipped: []Skipped{{Line: 1, Reason: "header says 10 goroutines, stacks add up to 4"}}},
		},
		{
			name: "CRLF",
			in:   strings.ReplaceAll(debug1(-1, d1Stack{count: 2, labels: [][2]string{{"k", "v"}}, frames: []d1Frame{d1Send, d1Short}}), "\n", "\r\n"),
			want: &Aggregated{Total: 2, Stacks: []Stack{{Count: 2, Labels: map[string]string{"k": "v"}, Frames: []Frame{d1Send.want(), d1Short.want()}}}},
		},
		{
			name: "unknown lines are skipped",
			in: "goroutine profile: total 2\n" +
				"#\t0x1\tmain.f+0x1\tmain.go:1\n" + // before any stack
				"1 @ 0x2\n" +
				"# labels: {k:v}\n" +
				"#\t0x1\tmain.f+0x1\tmain.go\n" +
				"#\t0x1\tmain.f+0x1\tmain.go:99999999999\n" +
				"#\t0x1\tmain.f+0x1\n" +
				"#\t0x1\tmain.f+0x1\tmain.go:2\n" +
				"\n" +
				"not a record\n" +
				"x @ 0x1\n" +
				"99999999999999999999 @ 0x1\n" +
				"1 @ 0x3\n" +
				"#\t0x1\tmain.g+0x1\tmain.go:3\n\n",
			want: &Aggregated{Total: 2, Stacks: []Stack{
				{Count: 1, Frames: []Frame{{Func: "main.f", File: "main.go", Line: 2}}},
				{Count: 1, Frames: []Frame{{Func: "main.g", File: "main.go", Line: 3}}},
			}, SkippedLines: 8, Skipped: []Skipped{
				{Line: 2, Text: "#\t0x1\tmain.f+0x1\tmain.go:1", Reason: "frame outside a stack"},
				{Line: 4, Text: "# labels: {k:v}", Reason: "malformed labels"},
				{Line: 5, Text: "#\t0x1\tmain.f+0x1\tmain.go", Reason: "malformed frame"},
				{Line: 6, Text: "#\t0x1\tmain.f+0x1\tmain.go:99999999999", Reason: "malformed frame"},
				{Line: 7, Text: "#\t0x1\tmain.f+0x1", Reason: "malformed frame"},
				{Line: 10, Text: "not a record", Reason: "not a stack header"},
				{Line: 11, Text: "x @ 0x1", Reason: "bad stack count"},
				{Line: 12, Text: "99999999999999999999 @ 0x1", Reason: "bad stack count"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDebug1(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseDebug1: %v\ninput:\n%s", err, tt.in)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\ninput:\n%s", diff, tt.in)
			}
		})
	}
}

func TestParseDebug1Errors(t *testing.T) {
	good := debug1(-1, d1Stack{count: 2, frames: []d1Frame{d1Send, d1Short}})
	tests := []struct {
		name     string
		in       io.Reader
		wantLine int // 0: not a *SyntaxError
		wantMsg  string
	}{
		{"empty", strings.NewReader(""), 0, "empty input"},
		{"debug=2 dump", strings.NewReader(debug2(gDump{header: gHeader{id: 1, status: "select"}, frames: []gFrame{frameSend}})), 1, "not a debug=1 goroutine dump"},
		{"binary", strings.NewReader("\x1f\x8b\x08\x00\x00\n"), 1, "not a debug=1"},
		{"other profile", strings.NewReader("heap profile: 1: 2 [3: 4] @ heap/1048576\n"), 1, "not a debug=1"},
		{"bad total", strings.NewReader("goroutine profile: total many\n"), 1, "bad goroutine total"},
		{"total overflows", strings.NewReader("goroutine profile: total 99999999999999999999\n"), 1, "bad goroutine total"},
		{"line over the limit", strings.NewReader("goroutine profile: total 1\n1 @" + strings.Repeat(" 0x1", 256<<10) + "\n"), 2, "longer than"},
		{"truncated mid-line", strings.NewReader(good[:len(good)-10]), 4, "truncated"},
		{"I/O error", &errReader{data: good[:30], err: io.ErrUnexpectedEOF}, 0, "reading line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDebug1(tt.in)
			if err == nil {
				t.Fatalf("ParseDebug1 = %+v, want an error", got)
			}
			if got != nil {
				t.Errorf("ParseDebug1 returned %+v with the error", got)
			}
			golden.CheckLineError(t, err, tt.wantLine, tt.wantMsg)
		})
	}
}

// pbProfile builds a goroutine profile the way runtime/pprof does: one
// location per return PC, inlined calls as extra lines of a location,
// innermost first.
type pbSample struct {
	count  int64
	labels map[string][]string
	// locs are the locations, innermost first; each holds its lines,
	// innermost (inlined) first. A location without lines has only an
	// address.
	locs [][]Frame
}

func pbProfile(t testing.TB, sampleTypes []*profile.ValueType, samples ...pbSample) *profile.Profile {
	t.Helper()
	p := &profile.Profile{SampleType: sampleTypes, PeriodType: &profile.ValueType{Type: "goroutine", Unit: "count"}, Period: 1}
	funcs := map[string]*profile.Function{}
	for _, s := range samples {
		ps := &profile.Sample{Value: make([]int64, len(sampleTypes)), Label: s.labels}
		for i := range ps.Value {
			ps.Value[i] = s.count
		}
		for _, lines := range s.locs {
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 + len(p.Location))}
			for _, f := range lines {
				fn := funcs[f.Func+f.File]
				if fn == nil {
					fn = &profile.Function{ID: uint64(len(p.Function) + 1), Name: f.Func, SystemName: f.Func, Filename: f.File}
					funcs[f.Func+f.File] = fn
					p.Function = append(p.Function, fn)
				}
				loc.Line = append(loc.Line, profile.Line{Function: fn, Line: int64(f.Line)})
			}
			p.Location = append(p.Location, loc)
			ps.Location = append(ps.Location, loc)
		}
		p.Sample = append(p.Sample, ps)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatalf("test profile is invalid: %v", err)
	}
	return p
}

var goroutineCount = []*profile.ValueType{{Type: "goroutine", Unit: "count"}}

func encode(t testing.TB, p *profile.Profile, gzipped bool) []byte {
	t.Helper()
	var b bytes.Buffer
	write := p.Write
	if !gzipped {
		write = p.WriteUncompressed
	}
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestParseProfile(t *testing.T) {
	park := Frame{Func: "runtime.gopark", File: "runtime/proc.go", Line: 462}
	send, interval := frameSend.want(false), frameInterval.want(false)
	inlined := Frame{Func: "k8s.io/apimachinery/pkg/util/wait.JitterUntil.func1", File: "backoff.go", Line: 226}
	tests := []struct {
		name string
		p    *profile.Profile
		want *Aggregated
	}{
		{
			name: "stacks and counts",
			p: pbProfile(t, goroutineCount,
				pbSample{count: 210, locs: [][]Frame{{park}, {send}, {interval}}},
				pbSample{count: 3, locs: [][]Frame{{park}}},
			),
			want: &Aggregated{Total: 213, Stacks: []Stack{
				{Count: 210, Frames: []Frame{park, send, interval}},
				{Count: 3, Frames: []Frame{park}},
			}},
		},
		{
			name: "inlined calls innermost first",
			p:    pbProfile(t, goroutineCount, pbSample{count: 1, locs: [][]Frame{{park}, {inlined, send}, {interval}}}),
			want: &Aggregated{Total: 1, Stacks: []Stack{{Count: 1, Frames: []Frame{park, inlined, send, interval}}}},
		},
		{
			name: "address-only location",
			p:    pbProfile(t, goroutineCount, pbSample{count: 1, locs: [][]Frame{{}, {send}}}),
			want: &Aggregated{Total: 1, Stacks: []Stack{{Count: 1, Frames: []Frame{{Func: "?0x1000"}, send}}}},
		},
		{
			name: "labels",
			p:    pbProfile(t, goroutineCount, pbSample{count: 2, labels: map[string][]string{"user": {"slow-informer"}, "empty": {}}, locs: [][]Frame{{send}}}),
			want: &Aggregated{Total: 2, Stacks: []Stack{{Count: 2, Labels: map[string]string{"user": "slow-informer"}, Frames: []Frame{send}}}},
		},
		{
			name: "goroutine count among other sample types",
			p:    pbProfile(t, []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "goroutine", Unit: "count"}}, pbSample{count: 5, locs: [][]Frame{{send}}}),
			want: &Aggregated{Total: 5, Stacks: []Stack{{Count: 5, Frames: []Frame{send}}}},
		},
		{
			name: "negative count skipped",
			p: pbProfile(t, goroutineCount,
				pbSample{count: -1, locs: [][]Frame{{send}}},
				pbSample{count: 2, locs: [][]Frame{{interval}}},
			),
			want: &Aggregated{Total: 2, Stacks: []Stack{{Count: 2, Frames: []Frame{interval}}},
				SkippedLines: 1, Skipped: []Skipped{{Line: 1, Reason: "sample with count -1"}}},
		},
	}
	for _, tt := range tests {
		for _, gz := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/gzip=%v", tt.name, gz), func(t *testing.T) {
				got, err := ParseProfile(bytes.NewReader(encode(t, tt.p, gz)))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestParseProfileErrors(t *testing.T) {
	cpu := pbProfile(t, []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		pbSample{count: 1, locs: [][]Frame{{{Func: "main.f"}}}})
	tests := []struct {
		name    string
		in      []byte
		wantMsg string
	}{
		{"empty", nil, "not a protobuf goroutine profile"},
		{"garbage", []byte("\x1f\x8b\x08\x00garbage"), "not a protobuf goroutine profile"},
		{"text", []byte("hello, world\n"), "not a protobuf goroutine profile"},
		{"cpu profile", encode(t, cpu, true), `sample types are ["samples/count" "cpu/nanoseconds"]`},
		{"no samples", encode(t, pbProfile(t, goroutineCount), true), "holds no samples"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProfile(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatalf("ParseProfile = %+v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

// TestParseProfileLegacyText documents that github.com/google/pprof/profile
// also reads the legacy debug=1 text: ParseProfile accepts it, with
// unsymbolized frames (the text's PCs), so callers that know the format
// should prefer ParseDebug1.
func TestParseProfileLegacyText(t *testing.T) {
	in := debug1(-1, d1Stack{count: 2, frames: []d1Frame{d1Send, d1Short}})
	got, err := ParseProfile(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 2 || len(got.Stacks) != 1 || len(got.Stacks[0].Frames) != 2 || !strings.HasPrefix(got.Stacks[0].Frames[0].Func, "?0x") {
		t.Errorf("ParseProfile(debug=1 text) = %+v", got)
	}
}
