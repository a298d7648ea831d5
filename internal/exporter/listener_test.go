package exporter

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

// abuse opens n connections to addr as one kind of connection abuse and
// returns them held open: "idle" sends one request, reads its answer and
// keeps the connection alive; "silent" sends nothing; "slow-header" sends
// a header without its end.
func abuse(tb testing.TB, addr, kind string, n int) []net.Conn {
	tb.Helper()
	conns := make([]net.Conn, 0, n)
	tb.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, c)
		switch kind {
		case "idle":
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				tb.Fatal(err)
			}
			r, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				tb.Fatal(err)
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		case "slow-header":
			if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: a\r\n"); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return conns
}

// scrape GETs /metrics over a new connection and returns its status and
// whether the body is the exporter's registry.
func scrape(tb testing.TB, addr string) (int, bool) {
	tb.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	r, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return r.StatusCode, strings.Contains(string(b), "go_goroutines")
}

// TestServeKeepsAnsweringScrapesUnderConnectionAbuse (issue 35): 64 idle
// kept-alive sockets, 64 silent ones, or 1,500 sending a header slowly,
// all held open, once took every slot of the cap until the server's idle
// or header timeout (2 minutes, 10 s) closed them, and scrapes timed out.
// The timeouts here are an hour, so only the cap's closing of connections
// without a request in flight can let the scrape through; it must, while
// the abuse is held open, and the server never holds more than the cap.
func TestServeKeepsAnsweringScrapesUnderConnectionAbuse(t *testing.T) {
	t.Parallel()
	e, _, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	for _, tc := range []struct {
		kind string
		n    int
	}{
		{"idle", MaxConnections},
		{"silent", MaxConnections},
		{"slow-header", 1500},
		{"idle", 3 * MaxConnections},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.n, tc.kind), func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := e.server()
			srv.ReadHeaderTimeout, srv.IdleTimeout, srv.ReadTimeout = time.Hour, time.Hour, time.Hour
			cl, _ := serveLimited(srv, l, MaxConnections)
			t.Cleanup(func() { srv.Close() })
			addr := l.Addr().String()
			held := abuse(t, addr, tc.kind, tc.n)
			for i := range 2 { // two scrapes in a row, as Prometheus would
				code, ok := scrape(t, addr)
				if code != http.StatusOK || !ok {
					t.Errorf("scrape %d with %d %s connections held open: status %d, registry served %v", i+1, len(held), tc.kind, code, ok)
				}
			}
			if n := cl.openConns(); n > MaxConnections {
				t.Errorf("%d connections open, past the cap of %d", n, MaxConnections)
			}
		})
	}
}

// TestServeCapsConnectionsServingRequests: with every slot taken by a
// connection serving a request, Accept waits (no more are accepted) until
// one of them is done; then the next is accepted. Loopback only; no
// timing: the listener says when it waits.
func TestServeCapsConnectionsServingRequests(t *testing.T) {
	t.Parallel()
	const limit = 3
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, limit+1), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})}
	cl := limitConns(l, limit)
	waiting := make(chan struct{}, 16)
	cl.full = func() { waiting <- struct{}{} }
	srv.ConnState = cl.ConnState
	go srv.Serve(cl)
	t.Cleanup(func() { srv.Close() })
	addr := l.Addr().String()
	answered := make(chan error, limit+1)
	get := func() {
		tr := &http.Transport{DisableKeepAlives: true}
		r, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/")
		if err == nil {
			r.Body.Close()
		}
		answered <- err
	}
	for range limit {
		go get()
		<-entered
	}
	go get() // the one past the cap
	<-waiting
	if len(entered) != 0 {
		t.Fatalf("a request was served past the cap of %d connections serving requests", limit)
	}
	release <- struct{}{} // one is done: its slot is free
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	<-entered // the next is accepted and served
	close(release)
	for range limit {
		if err := <-answered; err != nil {
			t.Error(err)
		}
	}
	if n := cl.openConns(); n > limit {
		t.Errorf("%d connections open, past the cap of %d", n, limit)
	}
}
