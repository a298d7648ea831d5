package model

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// BalancerBound bounds the connections opened through the kubeconfig host
// to reach every instance.
type BalancerBound struct {
	// Connections is the most connections opened to find the instances;
	// 0 means 5 per live instance and 4 more, at most 64 (12 to find one
	// process again). A balancer choosing backends at random leaves
	// one of 3 instances unreached after 19 connections once in 700 runs.
	Connections int
	// Time is the most time spent finding them, on Config.Clock; 0 means
	// 60 s.
	Time time.Duration
}

// ConnectionsFor is the bound for want live instances (0: unknown).
func (b BalancerBound) ConnectionsFor(want int) int {
	if b.Connections > 0 {
		return b.Connections
	}
	if want == 0 {
		return 12
	}
	return min(5*want+4, 64)
}

func (b BalancerBound) TimeOrDefault() time.Duration {
	if b.Time > 0 {
		return b.Time
	}
	return 60 * time.Second
}

// Fingerprint tells API server processes apart.
type Fingerprint struct {
	// Start is process_start_time_seconds.
	Start float64
	// IDHash is apiserver_id_hash, "" when /metrics has none
	// (discovery/identity.go).
	IDHash string
}

func (f Fingerprint) String() string {
	if f.IDHash != "" {
		return fmt.Sprintf("process_start_time_seconds %.2f, apiserver_id_hash %s", f.Start, f.IDHash)
	}
	return fmt.Sprintf("process_start_time_seconds %.2f", f.Start)
}

// OwnConn is the connection of a client through the kubeconfig host to
// one process. Safe for concurrent use.
type OwnConn struct {
	// Process is the fingerprint of the process the client reads.
	Process Fingerprint
	// Fresh builds a new transport: a new connection.
	Fresh func() (*http.Client, *atomic.Int64, error)

	// Ledger, shared by every connection of a run through the balancer,
	// says which of them samples each process; nil for none.
	Ledger *ProcessLedger

	mu sync.Mutex
	Hc *http.Client
	// Dials counts the transport's connections; checked is the count
	// when the process was last verified.
	Dials   *atomic.Int64
	checked int64
}

// httpClient is the client's HTTP client: its own connection's when it
// has one.
func (c *Client) httpClient() *http.Client {
	if c.Conn == nil {
		return c.http
	}
	c.Conn.mu.Lock()
	defer c.Conn.mu.Unlock()
	return c.Conn.Hc
}

// Redialed reports whether the connection was dialed again since the
// process was last verified.
func (o *OwnConn) Redialed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.Dials.Load() != o.checked
}

// Verified records the connection's dials as verified.
func (o *OwnConn) Verified() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checked = o.Dials.Load()
}

// Replace closes the connection and takes a new transport.
func (o *OwnConn) Replace() error {
	hc, dials, err := o.Fresh()
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Hc.CloseIdleConnections()
	o.Hc, o.Dials, o.checked = hc, dials, 0
	return nil
}

func (o *OwnConn) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.Hc.CloseIdleConnections()
}

// ProcessLedger records which client samples each API server process
// reached through the load balancer, by process_start_time_seconds: a
// connection whose sample reaches a process another client samples
// takes no goroutine dump or trace of it again (issue 35: 64 connections
// each took a debug=2 dump of what was one process). Safe for concurrent
// use.
type ProcessLedger struct {
	mu sync.Mutex
	by map[float64]*Client
}

// Claim records c as sampling the process started at start, unless
// another client does: then it returns that client, else nil.
func (l *ProcessLedger) Claim(start float64, c *Client) *Client {
	l.mu.Lock()
	defer l.mu.Unlock()
	if other, ok := l.by[start]; ok && other != c {
		return other
	}
	if l.by == nil {
		l.by = map[float64]*Client{}
	}
	l.by[start] = c
	return nil
}
