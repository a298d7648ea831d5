package fakeapiserver

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// DiscoveryPath is the path of the default/kubernetes EndpointSlices list.
const DiscoveryPath = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"

// HostileKind is how a hostile answer misbehaves.
type HostileKind int

const (
	// Endless answers 200 with Chunk repeated until the client goes away.
	Endless HostileKind = iota
	// GzipBomb answers 200 with Content-Encoding: gzip and Chunk repeated
	// without end inside: a few MB on the wire, unbounded decompressed.
	GzipBomb
	// Redirect answers Status (302 by default) with Location.
	Redirect
	// TooManyRequests answers 429 with Retry-After: RetryAfter seconds, as
	// API Priority and Fairness rejects a request.
	TooManyRequests
	// HTML answers Status (200 by default) with an HTML page.
	HTML
	// ErrorBody answers Status (500 by default) with Body as it is.
	ErrorBody
	// Silent accepts the request and never answers: it waits for the
	// client to give up, or for Gate to open and then answers 503.
	Silent
	// Stall answers 200, writes Body and then nothing more, holding the
	// response open until the client gives up: a slowloris.
	Stall
)

// Hostility is a hostile answer to one request (see Server.Hostile).
type Hostility struct {
	Kind HostileKind
	// Chunk is what Endless and GzipBomb repeat; a default fits the path.
	Chunk string
	// Status, Location, RetryAfter and Body shape the other kinds.
	Status     int
	Location   string
	RetryAfter int
	Body       string
	// Gate, for Silent, releases the requests held once enough arrived.
	Gate *Gate

	sent atomic.Int64
	hits atomic.Int64
}

// FlowSlack is what a server may write beyond what its client read,
// for tests bounding Sent: the HTTP/2 stream window of net/http's client
// (4 MiB, h2_bundle.go transportDefaultStreamFlow) and the socket buffers.
const FlowSlack = 16 << 20

// Sent is how many body bytes were written, compressed for a GzipBomb.
func (h *Hostility) Sent() int64 { return h.sent.Load() }

// Hits is how many requests got this answer.
func (h *Hostility) Hits() int64 { return h.hits.Load() }

// hostile returns the hostile answer for r: by its path with its query,
// then by its path alone.
func (s *Server) hostile(r *http.Request) *Hostility {
	if h := s.Hostile[r.URL.RequestURI()]; h != nil {
		return h
	}
	return s.Hostile[r.URL.Path]
}

func (h *Hostility) serve(w http.ResponseWriter, r *http.Request) {
	h.hits.Add(1)
	code := func(def int) int {
		if h.Status != 0 {
			return h.Status
		}
		return def
	}
	switch h.Kind {
	case Endless:
		w.Header().Set("Content-Type", "text/plain")
		h.repeat(w, h.chunk(r))
	case GzipBomb:
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		cw := &countingWriter{w: w, n: &h.sent}
		zw, _ := gzip.NewWriterLevel(cw, gzip.BestSpeed)
		var none atomic.Int64
		h.repeatTo(zw, h.chunk(r), &none)
		zw.Close()
	case Redirect:
		w.Header().Set("Location", h.Location)
		w.WriteHeader(code(http.StatusFound))
	case TooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(h.RetryAfter))
		status429(w)
	case HTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(code(http.StatusOK))
		io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in to continue</body></html>\n")
	case ErrorBody:
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code(http.StatusInternalServerError))
		io.WriteString(w, h.Body)
	case Stall:
		w.Header().Set("Content-Type", "application/octet-stream")
		io.WriteString(w, h.Body)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		<-r.Context().Done()
	case Silent:
		if h.Gate.wait(r) {
			status(w, http.StatusServiceUnavailable, "released by the gate")
		}
	}
}

// status429 answers as APF rejects a request: plain text, not a Status
// (k8s.io/apiserver pkg/server/filters/priority-and-fairness.go:377-381).
func status429(w http.ResponseWriter) {
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}

// chunk is Chunk, or a default that parses as the path's answer.
func (h *Hostility) chunk(r *http.Request) string {
	if h.Chunk != "" {
		return h.Chunk
	}
	switch r.URL.Path {
	case "/metrics":
		return "apiserver_request_total{code=\"200\",resource=\"pods\",verb=\"LIST\"} 1\n"
	case "/debug/pprof/goroutine":
		return WatcherGoroutine
	}
	return `{"metadata":{"name":"x"}},`
}

// WatcherGoroutine is one cacheWatcher goroutine blocked sending an
// initial event, as a debug=2 dump shows it (from the t1 capture); its id
// is rewritten as it repeats.
const WatcherGoroutine = `goroutine 1 [select, 3 minutes]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0xc000abc000, 0xc000def000, 0x0)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:412 +0x3a5
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0xc000abc000, {0x4749700, 0xc000111000}, {0x4700000, 0xc000222000}, 0x1a2b)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:470 +0x6b1
created by k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).startWatcher in goroutine 1234
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cacher.go:645 +0x25e

`

// repeat writes chunk to w until the client goes away, counting bytes.
func (h *Hostility) repeat(w io.Writer, chunk string) { h.repeatTo(w, chunk, &h.sent) }

func (h *Hostility) repeatTo(w io.Writer, chunk string, n *atomic.Int64) {
	// Goroutine ids differ from one repetition to the next.
	var id int
	for {
		id++
		c := chunk
		if len(c) > 12 && c[:12] == "goroutine 1 " {
			c = fmt.Sprintf("goroutine %d %s", id, c[12:])
		}
		m, err := io.WriteString(w, c)
		n.Add(int64(m))
		if err != nil {
			return
		}
	}
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	m, err := c.w.Write(p)
	c.n.Add(int64(m))
	return m, err
}

// Gate holds Silent requests, from one or several servers, until N of
// them wait at once; then it lets every one answer. Safe for concurrent
// use.
type Gate struct {
	N       int
	mu      sync.Mutex
	waiting int
	most    int
	open    chan struct{}
}

// NewGate returns a gate opening once n requests wait.
func NewGate(n int) *Gate { return &Gate{N: n, open: make(chan struct{})} }

// MostWaiting is the most requests that waited at once.
func (g *Gate) MostWaiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// wait reports whether the gate opened before the client went away.
func (g *Gate) wait(r *http.Request) bool {
	if g == nil {
		<-r.Context().Done()
		return false
	}
	g.mu.Lock()
	g.waiting++
	g.most = max(g.most, g.waiting)
	if g.waiting == g.N {
		close(g.open)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-g.open:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Sink is a plain-HTTP server on loopback that records the Authorization
// header of every request: where a followed redirect would send the token.
type Sink struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

// StartSink starts a Sink, closed when the test ends.
func StartSink(t testing.TB) *Sink {
	t.Helper()
	s := &Sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.tokens = append(s.tokens, r.Header.Get("Authorization"))
		s.mu.Unlock()
		status(w, http.StatusNotFound, "sink")
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests are the Authorization headers received, one per request.
func (s *Sink) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}
