package fakeapiserver

import (
	"io"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Balancer is an L4 load balancer on loopback, as cloud load balancers
// are: each TCP connection it accepts goes to one backend for its whole
// life, chosen by its pick function. Safe for concurrent use.
type Balancer struct {
	ln       net.Listener
	backends []*Server
	pick     func(n int) int

	mu    sync.Mutex
	n     int
	conns []net.Conn
}

// RoundRobin picks the backends in turn.
func RoundRobin(backends int) func(n int) int {
	return func(n int) int { return n % backends }
}

// StartBalancer listens on 127.0.0.1 and sends the n-th connection (from
// 0) to backends[pick(n)]. It is closed when the test ends.
func StartBalancer(t testing.TB, pick func(n int) int, backends ...*Server) *Balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Balancer{ln: ln, backends: backends, pick: pick}
	go b.accept()
	t.Cleanup(b.close)
	return b
}

// URL is the balancer's https URL.
func (b *Balancer) URL() string { return "https://" + b.ln.Addr().String() }

// Connections is how many connections the balancer accepted.
func (b *Balancer) Connections() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

func (b *Balancer) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		backend := b.backends[b.pick(b.n)]
		b.n++
		b.conns = append(b.conns, c)
		b.mu.Unlock()
		go b.forward(c, backend.Address())
	}
}

// forward copies c to and from a new connection to addr until either
// side closes.
func (b *Balancer) forward(c net.Conn, addr string) {
	up, err := net.Dial("tcp", addr)
	if err != nil {
		c.Close()
		return
	}
	b.mu.Lock()
	b.conns = append(b.conns, up)
	b.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
}

// Drop closes every connection open, as a balancer or server closing idle
// connections does: the clients dial again.
func (b *Balancer) Drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
	b.conns = nil
}

// close stops the listener and every connection.
func (b *Balancer) close() {
	b.ln.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.conns {
		c.Close()
	}
}

// L7Balancer is an HTTP (L7) load balancer on loopback: it answers each
// request, not each connection, from a backend of its own, so one
// connection's requests reach different processes. Where a real one
// spreads them by chance (and a sample's reads may all land on one
// process), this one is deterministic: a connection's first request of a
// path goes to the backend of the connection's ordinal, and each later
// request of the same path to the next backend, so a connection's
// successive /metrics, whatever else it asked between them, always come
// from different processes. Safe for concurrent use.
type L7Balancer struct {
	*httptest.Server
	mu sync.Mutex
	n  int
	// conns numbers the client connections, by remote address; asked
	// counts each connection's requests of a path.
	conns map[string]int
	asked map[[2]string]int
	route L7Route
}

// L7Route chooses the backend of a request (its number before the
// modulo) from the ordinal of its client connection, how many requests
// of the same path that connection made before it, and its path.
type L7Route func(conn, before int, path string) int

// Spread is StartL7Balancer's route: a connection's first request of a
// path goes to the backend of the connection's ordinal, each later one
// to the next backend.
func Spread(conn, before int, _ string) int { return conn + before }

// ByPath is the adversary no identity probe can see: every /metrics of
// a connection reaches the backend of its ordinal, and every other path
// (the APF dumps, the goroutine profiles and dumps, /version: all that
// carries no process identity) the next backend. A real balancer does
// this when routing rules send /debug paths to another pool.
func ByPath(conn, _ int, path string) int {
	if path == "/metrics" {
		return conn
	}
	return conn + 1
}

// StartL7Balancer serves TLS on 127.0.0.1 (the certificate every fake
// server has) and proxies each request as L7Balancer says (Spread). It
// is closed when the test ends.
func StartL7Balancer(t testing.TB, backends ...*Server) *L7Balancer {
	t.Helper()
	return StartL7BalancerRouted(t, Spread, backends...)
}

// StartL7BalancerRouted is StartL7Balancer choosing each request's
// backend by route.
func StartL7BalancerRouted(t testing.TB, route L7Route, backends ...*Server) *L7Balancer {
	t.Helper()
	b := &L7Balancer{conns: map[string]int{}, asked: map[[2]string]int{}, route: route}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			s := backends[b.next(r.In.RemoteAddr, r.In.URL.Path)%len(backends)]
			u, _ := url.Parse(s.URL)
			r.SetURL(u)
		},
		Transport: backends[0].Client().Transport,
	}
	b.Server = httptest.NewUnstartedServer(proxy)
	b.StartTLS()
	t.Cleanup(b.Close)
	return b
}

// next counts a request of path on the connection from remote and
// returns the backend's number before the modulo, by the route.
func (b *L7Balancer) next(remote, path string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n++
	c, ok := b.conns[remote]
	if !ok {
		c = len(b.conns)
		b.conns[remote] = c
	}
	k := [2]string{remote, path}
	i := b.route(c, b.asked[k], path)
	b.asked[k]++
	return i
}

// Requests is how many requests the balancer proxied.
func (b *L7Balancer) Requests() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}
