package stacks

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// Aggregated is a goroutine dump that carries counts per stack, not
// goroutines: debug=1 text or the protobuf profile.
type Aggregated struct {
	// Total is the goroutine count the dump states (debug=1 header, or the
	// sum of the samples).
	Total  int     `json:"total"`
	Stacks []Stack `json:"stacks"`
	// SkippedLines counts lines left out; Skipped keeps the first few.
	SkippedLines int       `json:"skippedLines,omitempty"`
	Skipped      []Skipped `json:"skipped,omitempty"`
}

var debug1Header = []byte("goroutine profile: total ")

// ParseDebug1 reads a debug=1 goroutine dump, as printed by runtime/pprof
// printCountProfile: a "goroutine profile: total N" header, then blocks of
// "COUNT @ PC PC ..." with an optional "# labels: {...}" line and one
// "#\tPC\tfunc+0xOFF\tfile:line" line per frame, ended by a blank line.
func ParseDebug1(r io.Reader) (*Aggregated, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	out := &Aggregated{}
	var skips skipLog
	lineNo := 0
	var cur *Stack
	sum := 0
	flush := func() {
		if cur != nil {
			out.Stacks = append(out.Stacks, *cur)
			sum += cur.Count
			cur = nil
		}
	}
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &SyntaxError{LineNo: lineNo + 1, Msg: fmt.Sprintf("line is longer than %d bytes: not a goroutine dump", 256<<10)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading line %d: %w", lineNo+1, err)
		}
		if len(b) == 0 && err != nil {
			break
		}
		lineNo++
		atEOF := err != nil
		if atEOF && len(b) > 0 {
			return nil, &SyntaxError{LineNo: lineNo, Msg: "dump is truncated: the last line has no line ending"}
		}
		line := bytes.TrimRight(b, "\r\n")
		switch {
		case lineNo == 1:
			if !bytes.HasPrefix(line, debug1Header) {
				return nil, &SyntaxError{LineNo: 1, Msg: fmt.Sprintf("not a debug=1 goroutine dump: want %q, got %q", "goroutine profile: total N", preview(line))}
			}
			n, ok := parseUint(line[len(debug1Header):])
			if !ok || n > 1<<40 {
				return nil, &SyntaxError{LineNo: 1, Msg: fmt.Sprintf("bad goroutine total %q", preview(line[len(debug1Header):]))}
			}
			out.Total = int(n)
		case len(line) == 0:
			flush()
		case line[0] == '#':
			if cur == nil {
				skips.add(lineNo, line, "frame outside a stack")
				continue
			}
			if bytes.HasPrefix(line, []byte("# labels: ")) {
				labels, ok := map[string]string(nil), false
				if l := line[len("# labels: "):]; len(l) > 0 && l[0] == '{' {
					labels, ok = parseLabels(l[1:], ":")
				}
				if !ok {
					skips.add(lineNo, line, "malformed labels")
					continue
				}
				cur.Labels = labels
				continue
			}
			f, ok := parseDebug1Frame(line)
			if !ok {
				skips.add(lineNo, line, "malformed frame")
				continue
			}
			cur.Frames = append(cur.Frames, f)
		default:
			flush()
			at := bytes.Index(line, []byte(" @"))
			if at < 0 {
				skips.add(lineNo, line, "not a stack header")
				continue
			}
			n, ok := parseUint(line[:at])
			if !ok || n > 1<<40 {
				skips.add(lineNo, line, "bad stack count")
				continue
			}
			cur = &Stack{Count: int(n)}
		}
	}
	flush()
	if lineNo == 0 {
		return nil, errors.New("empty input: no goroutines")
	}
	if out.Total != sum && skips.count == 0 {
		skips.add(1, nil, fmt.Sprintf("header says %d goroutines, stacks add up to %d", out.Total, sum))
	}
	out.SkippedLines, out.Skipped = skips.count, skips.kept
	return out, nil
}

// parseDebug1Frame reads "#\t0x2745666\tpkg.f+0x106\t\tpath/file.go:441"
// (tabwriter-aligned, so runs of tabs separate fields). A frame the
// runtime could not symbolize is printed as "#\t0x1234" alone.
func parseDebug1Frame(line []byte) (Frame, bool) {
	fields := bytes.FieldsFunc(line[1:], func(r rune) bool { return r == '\t' })
	switch len(fields) {
	case 1:
		return Frame{Func: "?" + string(fields[0])}, true
	case 3:
	default:
		return Frame{}, false
	}
	fn := fields[1]
	if i := bytes.LastIndex(fn, []byte("+0x")); i > 0 {
		fn = fn[:i]
	}
	f := Frame{Func: string(fn)}
	fl := fields[2]
	colon := bytes.LastIndexByte(fl, ':')
	if colon <= 0 {
		return Frame{}, false
	}
	n, ok := parseUint(fl[colon+1:])
	if !ok || n > 1<<31 {
		return Frame{}, false
	}
	f.File, f.Line = string(fl[:colon]), int(n)
	return f, true
}

// MaxProfileBytes bounds a protobuf profile, decompressed. A goroutine
// profile holds one sample per distinct stack: even a million goroutines
// give a few MB.
const MaxProfileBytes = 64 << 20

// readLimited reads all of r, failing beyond max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("goroutine profile larger than %d MiB (decompressed): not a goroutine profile", max>>20)
	}
	return b, nil
}

// ParseProfile reads a goroutine profile in protobuf form (gzipped or not),
// as served by /debug/pprof/goroutine without debug, with
// github.com/google/pprof/profile. Inlined calls are expanded innermost
// first, as in the text forms.
func ParseProfile(r io.Reader) (*Aggregated, error) {
	data, err := readLimited(r, MaxProfileBytes)
	if err != nil {
		return nil, err
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		// Decompressed here, with the same limit: profile.Parse would
		// inflate a gzip bomb without bound.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("not a protobuf goroutine profile: gzip: %w", err)
		}
		if data, err = readLimited(zr, MaxProfileBytes); err != nil {
			return nil, fmt.Errorf("not a protobuf goroutine profile: gzip: %w", err)
		}
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("not a protobuf goroutine profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "goroutine" && st.Unit == "count" {
			idx = i
		}
	}
	if idx < 0 {
		types := make([]string, len(p.SampleType))
		for i, st := range p.SampleType {
			types[i] = st.Type + "/" + st.Unit
		}
		return nil, fmt.Errorf("not a goroutine profile: sample types are %q, want \"goroutine/count\"", types)
	}
	out := &Aggregated{}
	var skips skipLog
	for si, s := range p.Sample {
		if idx >= len(s.Value) {
			skips.add(si+1, nil, "sample without a goroutine count")
			continue
		}
		n := s.Value[idx]
		if n < 0 || n > 1<<40 {
			skips.add(si+1, nil, fmt.Sprintf("sample with count %d", n))
			continue
		}
		st := Stack{Count: int(n)}
		for _, loc := range s.Location {
			if loc == nil {
				continue
			}
			if len(loc.Line) == 0 {
				st.Frames = append(st.Frames, Frame{Func: fmt.Sprintf("?%#x", loc.Address)})
				continue
			}
			// profile.proto: the last Line is the caller the others were
			// inlined into, so Line[0] is the innermost.
			for _, ln := range loc.Line {
				f := Frame{Line: int(ln.Line)}
				if ln.Function != nil {
					f.Func, f.File = ln.Function.Name, ln.Function.Filename
				}
				st.Frames = append(st.Frames, f)
			}
		}
		if len(s.Label) > 0 {
			st.Labels = map[string]string{}
			for k, v := range s.Label {
				if len(v) > 0 {
					st.Labels[k] = v[0]
				}
			}
		}
		out.Stacks = append(out.Stacks, st)
		out.Total += st.Count
	}
	out.SkippedLines, out.Skipped = skips.count, skips.kept
	if len(out.Stacks) == 0 && skips.count == 0 {
		return nil, errors.New("goroutine profile holds no samples")
	}
	return out, nil
}
