package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// TCPBalancer is the HA cluster's load balancer: a TCP proxy that hands
// each new connection to the next instance in turn, skipping one that
// refuses the connection (a passive health check), as managed clusters'
// network load balancers do. TLS passes through: clients verify the
// instances' certificate.
type TCPBalancer struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	// down are the backends taken out of rotation (SetDown).
	down map[string]bool
}

func startTCPBalancer(addr string, backends []string) (*TCPBalancer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &TCPBalancer{ln: ln, backends: backends, conns: map[net.Conn]struct{}{}, down: map[string]bool{}}
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

// Address is the balancer's host:port.
func (b *TCPBalancer) Address() string { return b.ln.Addr().String() }

func (b *TCPBalancer) serve() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		if !b.track(c) {
			return
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.proxy(c)
		}()
	}
}

// track records an open connection so Close can end it; false once closed.
func (b *TCPBalancer) track(c net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		c.Close()
		return false
	}
	b.conns[c] = struct{}{}
	return true
}

func (b *TCPBalancer) untrack(cs ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range cs {
		delete(b.conns, c)
		c.Close()
	}
}

// SetDown takes backend (an instance's address) out of rotation, or puts
// it back: a down backend gets no new connection, as when a health check
// fails or a network path breaks while the instance runs on (its lease
// kept). Connections already proxied to it stay.
func (b *TCPBalancer) SetDown(backend string, down bool) error {
	if !slices.Contains(b.backends, backend) {
		return fmt.Errorf("SetDown: %q is not a backend of the balancer (%v)", backend, b.backends)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down[backend] = down
	return nil
}

func (b *TCPBalancer) isDown(backend string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down[backend]
}

func (b *TCPBalancer) proxy(c net.Conn) {
	start := b.next.Add(1) - 1
	var up net.Conn
	for k := range len(b.backends) {
		addr := b.backends[(start+uint64(k))%uint64(len(b.backends))]
		if b.isDown(addr) {
			continue
		}
		var err error
		if up, err = net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
			break
		}
	}
	if up == nil || !b.track(up) {
		b.untrack(c)
		return
	}
	var done sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer done.Done()
		io.Copy(dst, src)
		// Pass the half-close on; the other direction may still flow.
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}
	done.Add(2)
	go pipe(up, c)
	go pipe(c, up)
	done.Wait()
	b.untrack(c, up)
}

// Close stops accepting, ends every proxied connection and waits for the
// balancer's goroutines.
func (b *TCPBalancer) Close() error {
	b.mu.Lock()
	b.closed = true
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	err := b.ln.Close()
	b.wg.Wait()
	return err
}

// Forwarded is one request an HTTPBalancer sent on, and where.
type Forwarded struct {
	Path    string
	Backend string
}

// HTTPBalancer is an HTTP-level load balancer (as some managed clusters'
// front ends and authenticating proxies are): it terminates TLS with the
// cluster's serving certificate and sends each request to the next
// instance in turn, so two requests on one client connection can reach
// two API server processes. It records where each request went.
type HTTPBalancer struct {
	ln       net.Listener
	srv      *http.Server
	backends []string
	next     atomic.Uint64
	served   chan struct{}

	mu        sync.Mutex
	forwarded []Forwarded
}

// StartHTTPBalancer starts an HTTPBalancer on addr (host:port, port 0 for a
// free one) in front of the cluster's instances.
func (c *Cluster) StartHTTPBalancer(addr string) (*HTTPBalancer, error) {
	if len(c.instances) == 0 {
		return nil, errors.New("StartHTTPBalancer: not an HA cluster (use StartHA)")
	}
	cert, err := tls.LoadX509KeyPair(c.certs.certFile, c.certs.keyFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.certs.caPEM)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	b := &HTTPBalancer{ln: ln, served: make(chan struct{})}
	for _, in := range c.instances {
		b.backends = append(b.backends, in.Address)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			backend := b.backends[(b.next.Add(1)-1)%uint64(len(b.backends))]
			b.mu.Lock()
			b.forwarded = append(b.forwarded, Forwarded{Path: pr.In.URL.Path, Backend: backend})
			b.mu.Unlock()
			pr.SetURL(&url.URL{Scheme: "https", Host: backend})
		},
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true},
		FlushInterval: -1,
	}
	b.srv = &http.Server{Handler: rp, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go func() {
		defer close(b.served)
		b.srv.ServeTLS(ln, "", "")
	}()
	return b, nil
}

// Address is the balancer's host:port.
func (b *HTTPBalancer) Address() string { return b.ln.Addr().String() }

// Forwarded returns every request sent on so far, in order.
func (b *HTTPBalancer) Forwarded() []Forwarded {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Forwarded(nil), b.forwarded...)
}

// Close stops the balancer and ends its connections.
func (b *HTTPBalancer) Close() error {
	err := b.srv.Close()
	<-b.served
	return err
}
