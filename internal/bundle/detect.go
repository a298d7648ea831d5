// Package bundle reads what an SRE saved during an incident, or what
// `collect` wrote: goroutine dumps, APF dumps, /metrics, /version and
// capture times, as loose files, directories or stdin, gzip-compressed or
// not. Each input's kind is detected from its content, never from its name.
// It hands classified values (internal/watches) to the diagnosis
// (internal/diagnosis).
package bundle

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// peekSize is how much of an input detection looks at.
const peekSize = 4096

var gzipMagic = []byte{0x1f, 0x8b}

// ErrUnknownKind is wrapped by Detect for content of no known kind.
var ErrUnknownKind = errors.New("unrecognized content")

// ErrEmpty is returned by Detect for an input of no bytes: an error for a
// file named on the command line, a file skipped with a warning in a
// directory (a stray notes.txt).
var ErrEmpty = errors.New("empty input")

// Open wraps r, decompressing gzip, and detects its kind. The returned
// reader yields the (decompressed) content from its start.
func Open(r io.Reader) (api.FileKind, *bufio.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return "", nil, err
	}
	if bytes.Equal(head, gzipMagic) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return "", nil, fmt.Errorf("gzip header: %w", err)
		}
		gz.Multistream(true)
		inner := bufio.NewReaderSize(&gzipErrReader{gz}, 64<<10)
		// A gzipped protobuf profile is read by the profile parser as is.
		k, err := detect(inner)
		return k, inner, err
	}
	k, err := detect(br)
	return k, br, err
}

// gzipErrReader names gzip failures (a truncated .gz) as such.
type gzipErrReader struct{ r io.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("decompressing gzip: %w", err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("gzip stream is truncated: %w", err)
	}
	return n, err
}

func detect(br *bufio.Reader) (api.FileKind, error) {
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xef, 0xbb, 0xbf}) {
		// A UTF-8 byte order mark, as some editors write: skip it.
		if _, err := br.Discard(3); err != nil {
			return "", err
		}
	}
	head, err := br.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", err
	}
	if len(head) == 0 {
		return "", ErrEmpty
	}
	if len(head) >= 2 && (head[0] == 0xff && head[1] == 0xfe || head[0] == 0xfe && head[1] == 0xff) {
		return "", fmt.Errorf("%w: UTF-16 text; convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)", ErrUnknownKind)
	}
	if isTraceHeader(head) {
		return api.FileTrace, nil
	}
	text := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case bytes.HasPrefix(text, []byte("goroutine profile: total ")):
		return api.FileGoroutineDebug1, nil
	case isDebug2Header(text):
		return api.FileGoroutineDebug2, nil
	case bytes.HasPrefix(text, []byte("PriorityLevelName,")):
		first, _, _ := bytes.Cut(text, []byte("\n"))
		if bytes.Contains(first, []byte("FlowSchemaName")) {
			return api.FileAPFRequests, nil
		}
		if bytes.Contains(first, []byte("ActiveQueues")) {
			return api.FileAPFLevels, nil
		}
	case bytes.HasPrefix(text, []byte("{")):
		if bytes.Contains(head, []byte(`"gitVersion"`)) {
			return api.FileVersion, nil
		}
		if bytes.Contains(head, []byte(`"kind": "`+api.KindManifest+`"`)) || bytes.Contains(head, []byte(`"kind":"`+api.KindManifest+`"`)) {
			return api.FileManifest, nil
		}
	case isCapturedAt(text):
		return api.FileCapturedAt, nil
	case isMetrics(text):
		return api.FileMetrics, nil
	}
	if !isText(head) {
		// Binary: the only binary kind is the protobuf profile (its gzip
		// layer, if any, is already off); the profile parser decides.
		return api.FileGoroutineProfile, nil
	}
	first, _, _ := bytes.Cut(text, []byte("\n"))
	return "", fmt.Errorf("%w: line 1 %q is not a goroutine dump (debug=1 or 2), an APF dump, /metrics, /version, a capture time or an execution trace", ErrUnknownKind, preview(first))
}

func isDebug2Header(b []byte) bool {
	const p = "goroutine "
	return bytes.HasPrefix(b, []byte(p)) && len(b) > len(p) && b[len(p)] >= '0' && b[len(p)] <= '9'
}

func isCapturedAt(b []byte) bool {
	line := bytes.TrimSpace(b)
	if len(line) > 64 || bytes.IndexByte(line, '\n') >= 0 {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, string(line))
	return err == nil
}

// isMetrics recognises Prometheus text exposition: comment lines starting
// with "# HELP" or "# TYPE", or a first line shaped like a sample of a
// metric kube-apiserver exposes (metrics.IsKnownName). Any "word number"
// line is not enough: a stray note would be read as /metrics.
func isMetrics(b []byte) bool {
	if bytes.HasPrefix(b, []byte("# HELP ")) || bytes.HasPrefix(b, []byte("# TYPE ")) {
		return true
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if len(first) == 0 {
		return false
	}
	c := first[0]
	if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	i := bytes.IndexAny(first, "{ ")
	if i <= 0 {
		return false
	}
	for _, c := range first[:i] {
		if !(c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	rest := first[i:]
	if rest[0] == '{' {
		end := bytes.LastIndexByte(rest, '}')
		if end < 0 {
			return false
		}
		rest = rest[end+1:]
	}
	// The sample value: a float, NaN or +/-Inf.
	fields := bytes.Fields(rest)
	if len(fields) == 0 {
		return false
	}
	_, err := strconv.ParseFloat(string(fields[0]), 64)
	return err == nil && metrics.IsKnownName(string(first[:i]))
}

func isText(b []byte) bool {
	// The last rune may be cut by the peek window.
	if len(b) > utf8.UTFMax {
		b = b[:len(b)-utf8.UTFMax]
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	return utf8.Valid(b)
}

func preview(b []byte) string {
	const max = 60
	if len(b) > max {
		b = b[:max]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}
