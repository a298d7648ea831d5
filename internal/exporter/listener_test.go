package exporter

import (
	"net"
	"net/http"
	"testing"
)

// TestServeSafeByDefaultCapsConnections: with the cap reached by idle
// connections, Accept waits (no more are accepted) until one closes, then
// accepts the next. Loopback only; no timing: the listener says when it
// waits.
func TestServeSafeByDefaultCapsConnections(t *testing.T) {
	const limit, idle = 3, 10
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bl := BoundedListener(inner, limit).(*boundedListener)
	waiting := make(chan struct{}, idle)
	bl.full = func() { waiting <- struct{}{} }
	accepted := make(chan net.Conn, idle)
	srv := &http.Server{ConnState: func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted <- c
		}
	}}
	go srv.Serve(bl)
	t.Cleanup(func() { srv.Close() })
	var clients []net.Conn
	for range idle {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		t.Cleanup(func() { c.Close() })
	}
	var conns []net.Conn
	for range limit {
		conns = append(conns, <-accepted)
	}
	<-waiting // every slot taken: Accept waits
	if n := len(accepted); n != 0 {
		t.Fatalf("%d connections accepted past the cap of %d", n, limit)
	}
	conns[0].Close() // the server closes one (as its timeout would)
	<-accepted       // and the next is accepted
	<-waiting
	if n := len(accepted); n != 0 {
		t.Errorf("%d more connections accepted past the cap after one closed", n)
	}
	_ = clients
}
