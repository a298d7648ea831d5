package fakeapiserver

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

func hostileGet(t *testing.T, s *Server, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+TokenAdmin)
	req.Header.Set("Accept-Encoding", "identity")
	c := s.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestEndlessRepeatsWithFreshGoroutineIDs: an endless dump repeats the
// watcher goroutine with a new id each time, and Sent counts what went out.
func TestEndlessRepeatsWithFreshGoroutineIDs(t *testing.T) {
	s := Start(t, golden.Fixture("t1"))
	h := &Hostility{Kind: Endless}
	s.Hostile = map[string]*Hostility{"/debug/pprof/goroutine?debug=2": h}
	resp := hostileGet(t, s, "/debug/pprof/goroutine?debug=2")
	b := make([]byte, 3*len(WatcherGoroutine))
	if _, err := io.ReadFull(resp.Body, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"goroutine 1 [select", "goroutine 2 [select", "goroutine 3 [select"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the first three repetitions have no %q", want)
		}
	}
	resp.Body.Close()
	if h.Hits() != 1 || h.Sent() < int64(len(b)) {
		t.Errorf("hits %d, sent %d; want 1 and at least %d", h.Hits(), h.Sent(), len(b))
	}
}

// TestGzipBombInflatesFarBeyondWhatIsSent: the compressed body is small on
// the wire and its content is the chunk, over and over.
func TestGzipBombInflatesFarBeyondWhatIsSent(t *testing.T) {
	s := Start(t, golden.Fixture("t1"))
	h := &Hostility{Kind: GzipBomb, Chunk: "aaaaaaaaaaaaaaaa"}
	s.Hostile = map[string]*Hostility{"/metrics": h}
	resp := hostileGet(t, s, "/metrics")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	const inflated = 8 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(zr, inflated))
	if err != nil || n != inflated {
		t.Fatalf("inflated %d bytes (%v), want %d", n, err, inflated)
	}
	resp.Body.Close()
	if sent := h.Sent(); sent == 0 || sent > inflated/100 {
		t.Errorf("sent %d compressed bytes for %d inflated, want a bomb (under 1%%)", sent, inflated)
	}
}

// TestShapedAnswers: redirect, 429 and HTML answers look as real ones do.
func TestShapedAnswers(t *testing.T) {
	tests := []struct {
		name       string
		h          *Hostility
		wantStatus int
		header     string
		wantHeader string
		wantBody   string
	}{
		{"redirect", &Hostility{Kind: Redirect, Location: "http://127.0.0.1:1/x"}, http.StatusFound, "Location", "http://127.0.0.1:1/x", ""},
		{"moved permanently", &Hostility{Kind: Redirect, Status: http.StatusMovedPermanently, Location: "/y"}, http.StatusMovedPermanently, "Location", "/y", ""},
		{"429", &Hostility{Kind: TooManyRequests, RetryAfter: 7}, http.StatusTooManyRequests, "Retry-After", "7", "Too many requests"},
		{"html", &Hostility{Kind: HTML}, http.StatusOK, "Content-Type", "text/html; charset=utf-8", "Sign in"},
		{"error body", &Hostility{Kind: ErrorBody, Status: 503, Body: "\x1b[31mred\x1b[0m"}, 503, "Content-Type", "text/plain", "\x1b[31mred"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, golden.Fixture("t1"))
			s.Hostile = map[string]*Hostility{"/version": tc.h}
			resp := hostileGet(t, s, "/version")
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get(tc.header) != tc.wantHeader || !strings.Contains(string(b), tc.wantBody) {
				t.Errorf("%d %s=%q %q; want %d %q containing %q", resp.StatusCode, tc.header, resp.Header.Get(tc.header), b, tc.wantStatus, tc.wantHeader, tc.wantBody)
			}
		})
	}
}

// TestGateReleasesOnceNWait: Silent requests are held until N wait at once,
// then each answers 503; a Silent answer without a gate waits for the
// client to give up.
func TestGateReleasesOnceNWait(t *testing.T) {
	s := Start(t, golden.Fixture("t1"))
	g := NewGate(3)
	s.Hostile = map[string]*Hostility{"/version": {Kind: Silent, Gate: g}, "/metrics": {Kind: Silent}}
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/version", nil)
			req.Header.Set("Authorization", "Bearer "+TokenAdmin)
			resp, err := s.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusServiceUnavailable {
			t.Errorf("request %d: %d, want 503 once the gate opened", i, c)
		}
	}
	if g.MostWaiting() != 3 {
		t.Errorf("MostWaiting %d, want 3", g.MostWaiting())
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+TokenAdmin)
	s.Started = make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		resp, err := s.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-s.Started
	cancel()
	if err := <-done; err == nil {
		t.Errorf("a Silent answer without a gate answered; want it to wait until the client gave up")
	}
}

// TestSinkRecordsTheTokens: a Sink keeps the Authorization header of each
// request, which is where a followed redirect would leak a token.
func TestSinkRecordsTheTokens(t *testing.T) {
	sink := StartSink(t)
	for _, tok := range []string{"Bearer a", ""} {
		req, _ := http.NewRequest(http.MethodGet, sink.URL, nil)
		if tok != "" {
			req.Header.Set("Authorization", tok)
		}
		resp, err := sink.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := sink.Requests(); len(got) != 2 || got[0] != "Bearer a" || got[1] != "" {
		t.Errorf("Requests = %q, want [\"Bearer a\" \"\"]", got)
	}
}
