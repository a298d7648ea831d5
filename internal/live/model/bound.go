package model

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// Every answer read from a server has a size bound near the size of a real
// one, counted after decompression: net/http's transport decompresses a
// gzip answer it asked for before the guard below sees the body
// (net/http transport.go, "DisableCompression"; client-go leaves it to
// net/http). An answer over its bound is a *TooLargeError naming the
// server and the path: the read stops there, nothing is cut silently.
// And no redirect is followed (redirect.go). docs/security.md states the
// rules.
const (
	// MaxListBytes bounds the default/kubernetes EndpointSlices list and
	// any request without a bound of its own: a slice of a few API servers
	// is a few KiB.
	MaxListBytes = 4 << 20
	// MaxMetricsBytes bounds /metrics: a real kube-apiserver exposes about
	// 2 MiB (the captures of testdata: 2.3 MB), tens of MiB with thousands
	// of CRDs.
	MaxMetricsBytes = 32 << 20
	// maxAPFBytes bounds each APF dump: one line per executing request or
	// priority level, a few MiB with 10,000 watches.
	maxAPFBytes = 32 << 20
	// MaxDumpBytes bounds the debug=2 goroutine dump: the runtime never
	// writes more than 64 MiB of it (stacks.MaxDumpBytes).
	MaxDumpBytes = stacks.MaxDumpBytes
	// maxProfileBytes bounds the debug=1 profile, one entry per distinct
	// stack (165 KB in the captures of testdata).
	maxProfileBytes = stacks.MaxProfileBytes
	// maxVersionBytes bounds /version (379 bytes in testdata).
	maxVersionBytes = 64 << 10
	// maxErrorBody is what is read of an error answer for its message.
	maxErrorBody = 4 << 10
)

// limitFor is the bound of an answer to a GET of path with query.
func limitFor(path string, query url.Values) int64 {
	switch {
	case path == "/metrics":
		return MaxMetricsBytes
	case path == "/version":
		return maxVersionBytes
	case strings.HasPrefix(path, "/debug/api_priority_and_fairness/"):
		return maxAPFBytes
	case path == "/debug/pprof/goroutine" && query.Get("debug") == "2":
		return MaxDumpBytes
	case strings.HasPrefix(path, "/debug/pprof/"):
		return maxProfileBytes
	}
	return MaxListBytes
}

type limitKey struct{}

// WithLimit sets the bound of the answers to requests made with ctx.
func WithLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, limitKey{}, n)
}

// TooLargeError is an answer larger than its bound, after decompression.
type TooLargeError struct {
	// Source names the server and the request: "HOST: GET PATH".
	Source string
	Limit  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the answer is larger than %s after decompression: refused, nothing of it is used (no real API server sends that much; see docs/security.md)", e.Source, mib(e.Limit))
}

// mib writes n bytes in MiB, or KiB under one MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// GuardedConfig returns a copy of cfg whose transport bounds every answer
// and refuses every redirect (guard), beneath client-go's own wrappers
// (auth, impersonation), so that client-go's LIST is guarded as our GETs
// are (client-go transport/round_trippers.go:42, HTTPWrappersForConfig
// applies WrapTransport first, on the bare transport).
func GuardedConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	prev := c.WrapTransport
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		g := http.RoundTripper(&guard{next: rt})
		if prev != nil {
			return prev(g)
		}
		return g
	}
	return c
}

// guard is the round tripper beneath every request to a server: it turns
// a redirect into a *RedirectError without following it, and bounds the
// body. Safe for concurrent use.
type guard struct{ next http.RoundTripper }

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	source := req.URL.Host + ": GET " + req.URL.Path
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.StatusCode != http.StatusNotModified {
		resp.Body.Close()
		return nil, newRedirectError(source, req.URL, resp)
	}
	if isHTML(resp.Header.Get("Content-Type")) && resp.StatusCode == http.StatusOK {
		resp.Body.Close()
		return nil, &HTMLError{Source: source}
	}
	limit, ok := req.Context().Value(limitKey{}).(int64)
	if !ok {
		limit = MaxListBytes
	}
	resp.Body = &boundedBody{rc: resp.Body, left: limit, err: &TooLargeError{Source: source, Limit: limit}}
	return resp, nil
}

// HTMLError is a 200 answer that is an HTML page: a login page or a proxy,
// not the Kubernetes API.
type HTMLError struct{ Source string }

func (e *HTMLError) Error() string {
	return e.Source + ": answered with an HTML page, not the Kubernetes API (a login page, or a proxy in front of the API server?)"
}

func isHTML(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/html")
}

// boundedBody reads at most left bytes, then fails with err if the body
// holds more.
type boundedBody struct {
	rc   io.ReadCloser
	left int64
	err  *TooLargeError
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 || err == nil {
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

// ReadAll reads the whole answer r (bounded by the guard), naming what on
// other errors.
func ReadAll(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(r)
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, tl
	case err != nil:
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// RefusedByGuard reports whether err is the guard's refusal of an answer
// (too large, a redirect, an HTML page): the server answered, so the
// other fetches of the sample are still made, each guarded alike.
func RefusedByGuard(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl) || GuardError(err) != nil
}

// ReadMetricsText reads /metrics, decompressing a gzip body the transport
// did not (one sent without Content-Encoding), within maxMetricsBytes
// after decompression.
func ReadMetricsText(r io.Reader, instance string) ([]byte, error) {
	what := instance + ": reading /metrics"
	b, err := ReadAll(r, what)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: gzip header: %w", what, err)
	}
	tl := &TooLargeError{Source: instance + ": GET /metrics (gzip)", Limit: MaxMetricsBytes}
	return ReadAll(&boundedBody{rc: io.NopCloser(zr), left: MaxMetricsBytes, err: tl}, what)
}

// TooLarge returns the *TooLargeError err wraps, nil if none.
func TooLarge(err error) *TooLargeError {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	return nil
}
