package metrics

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DefaultMaxBytes bounds the exposition text Parse accepts (after gzip
// decompression). A kube-apiserver with thousands of CRDs exposes tens of
// megabytes; the captures in testdata are 2.3 MB.
const DefaultMaxBytes = 256 << 20

// SyntaxError is returned by Parse when nothing in the input could be used.
type SyntaxError struct {
	Source string
	LineNo int // 1-based; 0 when the error is not about one line
	Msg    string
	Err    error // the underlying expfmt.ParseError, if any
}

func (e *SyntaxError) Error() string {
	if e.LineNo > 0 {
		return fmt.Sprintf("%q line %d: %s", e.Source, e.LineNo, e.Msg)
	}
	return fmt.Sprintf("%q: %s", e.Source, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Line is the 1-based line the error is about, 0 when none. Every
// parser's syntax error has it (stacks, apf, metrics).
func (e *SyntaxError) Line() int { return e.LineNo }

// Reason is the problem, without the source and the line.
func (e *SyntaxError) Reason() string { return e.Msg }

// ErrTooLarge is wrapped by Parse's error when the input exceeds the limit.
var ErrTooLarge = errors.New("input too large")

// Parser parses Prometheus text exposition. The zero Parser is ready to use
// with DefaultMaxBytes.
type Parser struct {
	// MaxBytes bounds the (decompressed) input; 0 means DefaultMaxBytes.
	MaxBytes int
	// Families, when set, are the only families read: the lines of every
	// other family are left out before parsing (families.go), so reading
	// a few families of a 2 MB exposition costs a scan, not a parse. The
	// Sample holds no other family, and Skipped lists what was left out
	// of these families' lines. When the input has none of them it is
	// parsed whole: its error, if Parse fails on it, else an empty Sample
	// (with the whole input's Skipped).
	Families []string
}

// Parse reads one Prometheus text exposition with the default limits. name
// is the file or URL, used in error messages.
func Parse(r io.Reader, name string) (*Sample, error) {
	return Parser{}.Parse(r, name)
}

// Parse reads one Prometheus text exposition (gzip-compressed input is
// decompressed). The text is parsed with github.com/prometheus/common/expfmt.
//
// An input that is partly unparseable gives a Sample whose Skipped field
// lists the lines left out: after a syntax error, parsing resumes at the next
// "# HELP" or "# TYPE" line (or at the next line when the input has none), so
// one bad line costs at most the rest of its family. An input without any
// usable family, binary input, or input over MaxBytes gives an error naming
// the source and, where it applies, the line.
func (p Parser) Parse(r io.Reader, name string) (*Sample, error) {
	limit := p.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	data, err := readLimited(r, name, limit)
	if err != nil {
		return nil, err
	}
	if isGzip(data) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, &SyntaxError{Source: name, Msg: fmt.Sprintf("gzip header: %v", err), Err: err}
		}
		data, err = readLimited(zr, name, limit)
		if err != nil {
			return nil, err
		}
	}
	if err := checkText(data, name); err != nil {
		return nil, err
	}
	if len(p.Families) == 0 {
		return parseText(data, name, nil)
	}
	return parseFamilies(data, name, p.Families)
}

// parseFamilies is Parse of the families want alone. When the input has
// none of them, the whole of it is parsed: an input that is no exposition
// at all fails as Parse fails.
func parseFamilies(data []byte, name string, families []string) (*Sample, error) {
	want := make(map[string]bool, len(families))
	for _, f := range families {
		want[f] = true
	}
	s, err := parseText(data, name, want)
	if err == nil {
		return s, nil
	}
	s, err = parseText(data, name, nil)
	if err != nil {
		return nil, err
	}
	for n := range s.families {
		if !want[n] {
			delete(s.families, n)
		}
	}
	return s, nil
}

// parseText parses the text data, checked by checkText; with want, only
// the lines of those families (keepFamilies), and an error when none is
// found.
func parseText(data []byte, name string, want map[string]bool) (*Sample, error) {
	s := &Sample{Source: name, Bytes: len(data), families: map[string]*dto.MetricFamily{}}
	s.Lines = bytes.Count(data, []byte{'\n'})
	// The format requires every line to end with a newline; a last line
	// without one was most likely cut off in transfer.
	if n := len(data); n > 0 && data[n-1] != '\n' {
		s.Lines++
		cut := bytes.LastIndexByte(data, '\n') + 1
		s.Skipped = append(s.Skipped, Skipped{FromLine: s.Lines, ToLine: s.Lines,
			Reason: fmt.Sprintf("no newline at end of input: last line %q looks truncated", clip(string(data[cut:]), 60))})
		data = data[:cut]
	}
	// Resuming after a syntax error at the input's own headers, blanked
	// or not, makes Skipped of a wanted family as the whole parse's.
	headers := headerLines(data)
	if want != nil {
		data = keepFamilies(data, want)
	}
	var firstErr *SyntaxError
	offset, line := 0, 1 // byte offset and 1-based line of the segment start
	for offset < len(data) {
		if len(s.Skipped) >= maxSkips {
			s.Skipped = append(s.Skipped, Skipped{FromLine: line, ToLine: s.Lines,
				Reason: fmt.Sprintf("more than %d syntax errors: the rest of the input is not read", maxSkips)})
			break
		}
		tp := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := tp.TextToMetricFamilies(bytes.NewReader(data[offset:]))
		if err == nil {
			s.merge(fams, line)
			break
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) {
			// Reading from memory fails only with parse errors.
			return nil, &SyntaxError{Source: name, LineNo: line, Msg: err.Error(), Err: err}
		}
		bad := line + max(pe.Line, 1) - 1
		afterBad, badText := skipLines(data, offset, bad-line+1)
		dropInProgress(fams, badText)
		s.merge(fams, line)
		if firstErr == nil {
			firstErr = &SyntaxError{Source: name, LineNo: bad, Msg: pe.Msg, Err: pe}
		}
		// Resume at the next HELP or TYPE line, or right after the bad
		// line when none follows (flat untyped input).
		nextOff, nextLine := afterBad, bad+1
		if i := sort.Search(len(headers), func(i int) bool { return headers[i].line > bad }); i < len(headers) {
			nextOff, nextLine = headers[i].offset, headers[i].line
		}
		reason := pe.Msg
		if nextLine-1 > bad {
			reason += "; rest of the family skipped"
		}
		s.Skipped = append(s.Skipped, Skipped{FromLine: bad, ToLine: nextLine - 1, Reason: reason})
		offset, line = nextOff, nextLine
	}
	for n := range s.families {
		if want != nil && !want[n] {
			// A line the scan gave a wanted family and the parser
			// another (families.go).
			delete(s.families, n)
		}
	}
	s.dedupe()
	if len(s.families) == 0 {
		if firstErr != nil {
			firstErr.Msg += hint(data)
			return nil, firstErr
		}
		if len(s.Skipped) > 0 {
			return nil, &SyntaxError{Source: name, LineNo: s.Skipped[0].FromLine, Msg: s.Skipped[0].Reason}
		}
		return nil, &SyntaxError{Source: name, Msg: "no metric samples: the input is empty or only comments"}
	}
	return s, nil
}

// dropInProgress removes from a segment cut short by a syntax error the
// series the bad line was building: a counter, gauge or untyped series is
// added before its value is read (and so has none), and a histogram or
// summary series would lack the lines after the bad one.
func dropInProgress(fams map[string]*dto.MetricFamily, badLine []byte) {
	for _, f := range fams {
		kept := f.Metric[:0]
		for _, m := range f.Metric {
			if m.Counter != nil || m.Gauge != nil || m.Untyped != nil || m.Histogram != nil || m.Summary != nil {
				kept = append(kept, m)
			}
		}
		f.Metric = kept
	}
	name := string(bytes.TrimLeft(badLine, " \t"))
	if i := strings.IndexAny(name, "{ \t"); i >= 0 {
		name = name[:i]
	}
	for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
		f, ok := fams[strings.TrimSuffix(name, suffix)]
		if !ok || len(f.Metric) == 0 {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
			f.Metric = f.Metric[:len(f.Metric)-1]
		}
		return
	}
}

// maxSkips bounds the syntax errors Parse recovers from: past it, the input
// is not worth reading on (and hostile input cannot make Parse slow).
const maxSkips = 1000

type header struct{ offset, line int }

// headerLines lists the "# HELP" and "# TYPE" lines of data, where parsing
// can resume after a syntax error.
func headerLines(data []byte) []header {
	var out []header
	for off, line := 0, 1; off < len(data); line++ {
		rest := data[off:]
		if bytes.HasPrefix(rest, []byte("# HELP ")) || bytes.HasPrefix(rest, []byte("# TYPE ")) {
			out = append(out, header{off, line})
		}
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return out
}

// skipLines returns the offset just past the n-th line from offset, and the
// text of that line.
func skipLines(data []byte, offset, n int) (int, []byte) {
	var text []byte
	for ; n > 0 && offset < len(data); n-- {
		i := bytes.IndexByte(data[offset:], '\n')
		if i < 0 {
			return len(data), data[offset:]
		}
		text = data[offset : offset+i]
		offset += i + 1
	}
	return offset, text
}

func readLimited(r io.Reader, name string, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("reading %q: %w: more than %d bytes", name, ErrTooLarge, limit)
	}
	return data, nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// checkText refuses input that is evidently not text: a NUL byte, or many
// invalid UTF-8 sequences, in the first 64 KiB (protobuf exposition, an
// image, a core file). A few bad bytes are left to the parser, which skips
// the lines that hold them.
func checkText(data []byte, name string) error {
	head := data
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	bad, msg := bytes.IndexByte(head, 0), "a NUL byte"
	if bad < 0 {
		invalid, first := 0, -1
		for i := 0; i < len(head); {
			r, n := utf8.DecodeRune(head[i:])
			if r == utf8.RuneError && n <= 1 && len(head)-i >= utf8.UTFMax {
				invalid++
				if first < 0 {
					first = i
				}
			}
			i += n
		}
		if invalid <= 8 {
			return nil
		}
		bad, msg = first, fmt.Sprintf("%d invalid UTF-8 sequences, the first", invalid)
	}
	line := bytes.Count(head[:bad], []byte{'\n'}) + 1
	return &SyntaxError{Source: name, LineNo: line,
		Msg: fmt.Sprintf("binary data (%s at byte %d): not Prometheus text exposition (a protobuf scrape? fetch /metrics with Accept: text/plain)", msg, bad)}
}

// hint guesses what a wholly unparseable input is, for the error message.
func hint(data []byte) string {
	t := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(t, []byte("{")):
		return ": the input is JSON (an API error Status?), not Prometheus text exposition"
	case bytes.HasPrefix(t, []byte("<")):
		return ": the input is HTML or XML (a proxy error page?), not Prometheus text exposition"
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
