package discovery

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The identity probe. A process is told apart by two series of its
// /metrics (process_start_time_seconds, and apiserver_id_hash where it
// has one), so the probe streams the text line by line and keeps
// nothing: constant memory, and one comparison per line instead of a
// parse of every family. It still reads the whole answer: the start
// time sits near the end (2,219,472 bytes into the 2,316,849 of
// testdata's seed-repro/t2), and a body closed before its end closes an
// HTTP/1.1 connection, which would lose the very connection the probe
// vouches for.

// maxProbeLine bounds one line of /metrics as the probe reads it.
const maxProbeLine = 1 << 20

var startName = []byte("process_start_time_seconds")

// FingerprintOf reads the fingerprint of the process behind c, one
// identity probe; n is the bytes read, for the cost of the process that
// answered.
func FingerprintOf(ctx context.Context, c *model.Client) (fp model.Fingerprint, n int64, err error) {
	resp, err := c.Get(ctx, model.PathOf(api.FileMetrics))
	if err != nil {
		return model.Fingerprint{}, 0, err
	}
	defer resp.Close()
	cr := &model.CountingReader{R: resp.Body}
	fp, err = scanFingerprint(cr, c.Inst.Name)
	return fp, cr.N, err
}

// scanFingerprint reads a /metrics text (gzip or not, bounded by
// model.MaxMetricsBytes after decompression and maxProbeLine a line) to
// its end and returns its process start and first valid
// apiserver_id_hash.
func scanFingerprint(r io.Reader, instance string) (model.Fingerprint, error) {
	br := bufio.NewReader(r)
	var text io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return model.Fingerprint{}, fmt.Errorf("%s: reading /metrics: gzip header: %w", instance, err)
		}
		text = zr
	}
	lr := &io.LimitedReader{R: text, N: model.MaxMetricsBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), maxProbeLine)
	var fp model.Fingerprint
	found := false
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if fp.IDHash == "" {
			fp.IDHash = idHashOf(b)
		}
		if v, ok := startLine(b); ok {
			if found && v != fp.Start {
				return model.Fingerprint{}, fmt.Errorf("%s: /metrics line %d: a second process_start_time_seconds (%v, then %v): API server processes cannot be told apart", instance, line, fp.Start, v)
			}
			fp.Start, found = v, true
		}
	}
	switch err := sc.Err(); {
	case lr.N <= 0:
		return model.Fingerprint{}, &model.TooLargeError{Source: instance + ": GET /metrics", Limit: model.MaxMetricsBytes}
	case errors.Is(err, bufio.ErrTooLong):
		return model.Fingerprint{}, fmt.Errorf("%s: reading /metrics: a line longer than %d KiB", instance, maxProbeLine>>10)
	case err != nil:
		return model.Fingerprint{}, fmt.Errorf("%s: reading /metrics: %w", instance, err)
	case !found:
		return model.Fingerprint{}, fmt.Errorf("%s: /metrics has no process_start_time_seconds: API server processes cannot be told apart", instance)
	}
	return fp, nil
}

// startLine reads a process_start_time_seconds sample line ("NAME VALUE"
// or "NAME{} VALUE", a timestamp after it allowed); ok is false for any
// other line and without a finite positive value.
func startLine(b []byte) (float64, bool) {
	rest, ok := bytes.CutPrefix(b, startName)
	if !ok {
		return 0, false
	}
	rest, _ = bytes.CutPrefix(rest, []byte("{}"))
	if len(rest) == 0 || rest[0] != ' ' {
		return 0, false
	}
	f := bytes.Fields(rest)
	if len(f) == 0 || len(f) > 2 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}
