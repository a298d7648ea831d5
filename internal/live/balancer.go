package live

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Every instance, through the balancer. When the instances' own
// addresses do not answer (a managed control plane: only its load
// balancer is reachable), each instance is read over a connection of its
// own through the kubeconfig host. An L4 balancer keeps a TCP connection
// on one backend, so each new connection may reach another instance:
// connections are opened, each on a new transport, until every live
// instance (countLive) has been reached or BalancerBound is hit. Each
// connection's process is known by its fingerprint (/metrics:
// process_start_time_seconds); a connection to a process already reached
// is closed. The sample of an instance is taken over its connection, and
// when the transport had to dial again (the balancer or the server
// closed the idle connection between samples), the same process is found
// again before the sample, by its fingerprint, or the sample fails.

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

// connections is the bound for want live instances (0: unknown).
func (b BalancerBound) connections(want int) int {
	if b.Connections > 0 {
		return b.Connections
	}
	if want == 0 {
		return 12
	}
	return min(5*want+4, 64)
}

func (b BalancerBound) time() time.Duration {
	if b.Time > 0 {
		return b.Time
	}
	return 60 * time.Second
}

// fingerprint tells API server processes apart.
type fingerprint struct {
	// Start is process_start_time_seconds.
	Start float64
	// IDHash is apiserver_id_hash, "" when /metrics has none
	// (identity.go).
	IDHash string
}

func (f fingerprint) String() string {
	if f.IDHash != "" {
		return fmt.Sprintf("process_start_time_seconds %.2f, apiserver_id_hash %s", f.Start, f.IDHash)
	}
	return fmt.Sprintf("process_start_time_seconds %.2f", f.Start)
}

// ownConn is the connection of a client through the kubeconfig host to
// one process. Safe for concurrent use.
type ownConn struct {
	// process is the fingerprint of the process the client reads.
	process fingerprint
	// fresh builds a new transport: a new connection.
	fresh func() (*http.Client, *atomic.Int64, error)

	mu sync.Mutex
	hc *http.Client
	// dials counts the transport's connections; checked is the count
	// when the process was last verified.
	dials   *atomic.Int64
	checked int64
}

// httpClient is the client's HTTP client: its own connection's when it
// has one.
func (c *client) httpClient() *http.Client {
	if c.conn == nil {
		return c.http
	}
	c.conn.mu.Lock()
	defer c.conn.mu.Unlock()
	return c.conn.hc
}

// redialed reports whether the connection was dialed again since the
// process was last verified.
func (o *ownConn) redialed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dials.Load() != o.checked
}

// verified records the connection's dials as verified.
func (o *ownConn) verified() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.checked = o.dials.Load()
}

// replace closes the connection and takes a new transport.
func (o *ownConn) replace() error {
	hc, dials, err := o.fresh()
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hc.CloseIdleConnections()
	o.hc, o.dials, o.checked = hc, dials, 0
	return nil
}

func (o *ownConn) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hc.CloseIdleConnections()
}

// freshTransport returns a function building, on each call, an HTTP
// client of cfg with a transport of its own (a distinct dialer keeps
// client-go from sharing its cached transport) whose dials it counts.
func freshTransport(cfg *rest.Config) func() (*http.Client, *atomic.Int64, error) {
	return func() (*http.Client, *atomic.Int64, error) {
		c := rest.CopyConfig(guardedConfig(cfg))
		c.Timeout = 0
		next := c.Dial
		if next == nil {
			next = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		}
		dials := &atomic.Int64{}
		c.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			dials.Add(1)
			return next(ctx, network, address)
		}
		hc, err := rest.HTTPClientFor(c)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: building an HTTP client: %w", hostOf(cfg.Host), err)
		}
		return hc, dials, nil
	}
}

// ownClient is a client of inst (through the kubeconfig host) on a
// connection of its own.
func (cfg Config) ownClient(inst Instance) (*client, error) {
	c, err := cfg.clientFor(inst)
	if err != nil {
		return nil, err
	}
	o := &ownConn{fresh: freshTransport(cfg.REST)}
	if o.hc, o.dials, err = o.fresh(); err != nil {
		return nil, err
	}
	c.conn = o
	return c, nil
}

// fingerprintOf reads the fingerprint of the process behind c; n is the
// bytes read, for the cost of the process that answered.
func fingerprintOf(ctx context.Context, c *client) (fp fingerprint, n int64, err error) {
	resp, err := c.Get(ctx, pathOf(api.FileMetrics))
	if err != nil {
		return fingerprint{}, 0, err
	}
	defer resp.Close()
	b, err := readMetricsText(resp.Body, c.inst.Name)
	if err != nil {
		return fingerprint{}, int64(len(b)), err
	}
	st, ok := startOf(b)
	if !ok {
		return fingerprint{}, int64(len(b)), fmt.Errorf("%s: /metrics has no process_start_time_seconds: API server processes cannot be told apart", c.inst.Name)
	}
	return fingerprint{Start: st, IDHash: idHashOf(b)}, int64(len(b)), nil
}

// startOf reads process_start_time_seconds from a /metrics text, the one
// family parsed, as processStart does (metrics.Parser.Families,
// metrics.Extract); ok is false without a finite positive value.
func startOf(text []byte) (float64, bool) {
	if n := len(text); n > 0 && text[n-1] != '\n' {
		// The text format ends every line with a newline; a body without
		// the last one still says its start.
		text = append(text[:n:n], '\n')
	}
	s, err := metrics.Parser{Families: startFamily}.Parse(bytes.NewReader(text), "/metrics")
	if err != nil {
		return 0, false
	}
	f := metrics.Extract(s).ProcessStartTime
	return f, f > 0 && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// balancerRun is what the search through the balancer did.
type balancerRun struct {
	// Connections were opened.
	Connections int
	// Bound is the connection bound; TimedOut is set when the time bound
	// ended the search.
	Bound    int
	TimedOut bool
}

// throughBalancer replaces the instances, none reachable on its own
// address (results say why), by the processes reached through the
// kubeconfig host, one connection each, until want.Count are found or the
// bound is hit. It returns their clients and results, the notes saying
// so, and what the search did.
func (cfg Config) throughBalancer(ctx context.Context, results []InstanceResult, want liveInstances) ([]*client, []InstanceResult, []string, balancerRun, error) {
	fb := fallbackInstance(cfg.REST)
	if want.Count < 2 {
		return cfg.oneConnection(results)
	}
	var notes []string
	if len(results) > 0 && results[0].Instance.Pinned {
		notes = append(notes, fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, one connection per instance, told apart by process_start_time_seconds", len(results), results[0].Errors[0], fb.Name))
		for i := range results {
			notes = append(notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
		}
	}
	run := balancerRun{Bound: cfg.Balancer.connections(want.Count)}
	start := cfg.Clock.Now()
	var clients []*client
	var out []InstanceResult
	// seen is the index in out of each process reached: a connection to
	// one already reached adds its bytes to that process's cost.
	seen := map[fingerprint]int{}
	for run.Connections < run.Bound && len(clients) < want.Count && ctx.Err() == nil {
		if cfg.Clock.Since(start) >= cfg.Balancer.time() {
			run.TimedOut = true
			break
		}
		inst := fb
		c, err := cfg.ownClient(inst)
		if err != nil {
			return nil, nil, nil, run, err
		}
		run.Connections++
		fp, n, err := fingerprintOf(ctx, c)
		if err != nil && len(clients) == 0 {
			// The first connection cannot be fingerprinted (/metrics
			// refused or down): read through it as one instance, its
			// sample says what failed.
			notes = append(notes, fmt.Sprintf("cannot tell the API server processes apart through the kubeconfig host: %v; reading through one connection", err))
			c.conn.close()
			c.conn = nil // no process to keep: the plain client
			return []*client{c}, []InstanceResult{{Instance: fb}}, notes, run, nil
		}
		if i, ok := seen[fp]; err != nil || ok {
			if ok {
				out[i].cost.extraBytes += n
			}
			c.conn.close()
			continue
		}
		seen[fp] = len(out)
		c.conn.process = fp
		c.conn.verified()
		inst.Lease = want.leaseOf(fp)
		cfg.progress("%s: connection %d reached a new API server process (%s)", fb.Name, run.Connections, fp)
		clients = append(clients, c)
		out = append(out, InstanceResult{Instance: inst, cost: costMeter{extraBytes: n}})
	}
	nameProcesses(fb.Name, clients, out)
	return clients, out, notes, run, nil
}

// oneConnection is the reading through the kubeconfig host when fewer
// than two live instances are known: nothing to tell apart, one client
// (requests may still reach several processes: checkOneProcess says so).
func (cfg Config) oneConnection(results []InstanceResult) ([]*client, []InstanceResult, []string, balancerRun, error) {
	fb := fallbackInstance(cfg.REST)
	notes := []string{fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, where a load balancer may answer each request from a different server", len(results), results[0].Errors[0], fb.Name)}
	c, err := cfg.clientFor(fb)
	if err != nil {
		return nil, nil, nil, balancerRun{}, err
	}
	for i := range results {
		notes = append(notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
	}
	return []*client{c}, []InstanceResult{{Instance: fb}}, notes, balancerRun{Connections: 1, Bound: 1}, nil
}

// sameProcess makes sure c reaches its process before a sample: the
// process behind its connection is fingerprinted (before a later sample
// always: the connection may have closed while idle, unseen until used;
// before the first when the transport dialed again since the search), and
// new connections are opened until the process is found again, within
// the bound.
func (cfg Config) sameProcess(ctx context.Context, c *client, ir *InstanceResult, later bool) error {
	o := c.conn
	if o == nil || !later && !o.redialed() {
		return nil
	}
	bound := cfg.Balancer.connections(0)
	var last fingerprint
	for i := 0; i < bound && ctx.Err() == nil; i++ {
		if i > 0 {
			if err := o.replace(); err != nil {
				return err
			}
		}
		fp, n, err := fingerprintOf(ctx, c)
		if err == nil && fp == o.process {
			ir.cost.extraBytes += n
			o.verified()
			return nil
		}
		last = fp
	}
	return fmt.Errorf("%s: the API server process read before (%s) was not found again through the load balancer after %d connection(s) (the last reached %s)", c.inst.Name, o.process, bound, last)
}

// checkOwnProcess, on an instance's own connection through the load
// balancer, compares the sample's /metrics with the process the
// connection was kept for: another process on the same connection means
// the balancer spreads one connection's requests (an L7 balancer), and
// the sample may mix instances.
func (sp *sampler) checkOwnProcess() {
	o := sp.c.conn
	if o == nil || math.IsNaN(sp.look.start) || sp.look.start == o.process.Start {
		return
	}
	how := "over the same connection: the load balancer spreads one connection's requests over API server processes (an HTTP, L7, balancer), so each fetch may come from any instance and the instances cannot be read one by one through it"
	if o.redialed() {
		how = "over a new connection, dialed during the sample"
	}
	note := fmt.Sprintf("sample %d: /metrics came from process_start_time_seconds %.2f, not %.2f, the process this connection was kept for, %s", sp.n, sp.look.start, o.process.Start, how)
	if sp.cfg.Hints.APIServers != "" {
		note += "; pin instances with " + sp.cfg.Hints.APIServers
	}
	sp.ir.Notes = append(sp.ir.Notes, note)
	sp.sample.Mixed = note
	sp.cfg.progress("%s: %s", sp.c.inst.Name, note)
}
