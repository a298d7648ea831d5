package discovery

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
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

// freshTransport returns a function building, on each call, an HTTP
// client of cfg with a transport of its own (a distinct dialer keeps
// client-go from sharing its cached transport) whose dials it counts.
func freshTransport(cfg *rest.Config) func() (*http.Client, *atomic.Int64, error) {
	return func() (*http.Client, *atomic.Int64, error) {
		c := rest.CopyConfig(model.GuardedConfig(cfg))
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
			return nil, nil, fmt.Errorf("%s: building an HTTP client: %w", HostOf(cfg.Host), err)
		}
		return hc, dials, nil
	}
}

// ownClient is a client of inst (through the kubeconfig host) on a
// connection of its own.
func ownClient(cfg model.Config, inst model.Instance) (*model.Client, error) {
	c, err := cfg.ClientFor(inst)
	if err != nil {
		return nil, err
	}
	o := &model.OwnConn{Fresh: freshTransport(cfg.REST)}
	if o.Hc, o.Dials, err = o.Fresh(); err != nil {
		return nil, err
	}
	c.Conn = o
	return c, nil
}

// BalancerRun is what the search through the balancer did.
type BalancerRun struct {
	// Connections were opened.
	Connections int
	// Bound is the connection bound; TimedOut is set when the time bound
	// ended the search.
	Bound    int
	TimedOut bool
}

// adopt keeps connection c, the n-th, to the new process fp as the
// instance inst holding lease, its first read of n bytes counted.
func adopt(cfg model.Config, c *model.Client, inst model.Instance, fp model.Fingerprint, lease string, bytes int64, n int) model.InstanceResult {
	c.Conn.Process = fp
	c.Conn.Verified()
	inst.Lease = lease
	cfg.Progressf("%s: connection %d reached a new API server process (%s)", inst.Name, n, fp)
	return model.InstanceResult{Instance: inst, Meter: model.CostMeter{ExtraBytes: bytes}}
}

// unpinnedNotes say why the instances are read through the kubeconfig
// host, when they were discovered but none could be reached directly.
func unpinnedNotes(results []model.InstanceResult, host string) []string {
	var notes []string
	if len(results) > 0 && results[0].Instance.Pinned {
		notes = append(notes, fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, one connection per instance, told apart by process_start_time_seconds", len(results), results[0].Errors[0], host))
		for i := range results {
			notes = append(notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
		}
	}
	return notes
}

// ThroughBalancer replaces the instances, none reachable on its own
// address (results say why), by the processes reached through the
// kubeconfig host, one connection each, until want.Count are found or the
// bound is hit. It returns their clients and results, the notes saying
// so, and what the search did.
func ThroughBalancer(ctx context.Context, cfg model.Config, results []model.InstanceResult, want liveInstances) ([]*model.Client, []model.InstanceResult, []string, BalancerRun, error) {
	fb := fallbackInstance(cfg.REST)
	if want.Count < 2 {
		return oneConnection(cfg, results)
	}
	notes := unpinnedNotes(results, fb.Name)
	run := BalancerRun{Bound: cfg.Balancer.ConnectionsFor(want.Count)}
	start := cfg.Clock.Now()
	var clients []*model.Client
	var out []model.InstanceResult
	// seen is the index in out of each process reached: a connection to
	// one already reached adds its bytes to that process's cost.
	seen := map[model.Fingerprint]int{}
	for run.Connections < run.Bound && len(clients) < want.Count && ctx.Err() == nil {
		if cfg.Clock.Since(start) >= cfg.Balancer.TimeOrDefault() {
			run.TimedOut = true
			break
		}
		inst := fb
		c, err := ownClient(cfg, inst)
		if err != nil {
			return nil, nil, nil, run, err
		}
		run.Connections++
		fp, n, err := FingerprintOf(ctx, c)
		if err != nil && len(clients) == 0 {
			// The first connection cannot be fingerprinted (/metrics
			// refused or down): read through it as one instance, its
			// sample says what failed.
			notes = append(notes, fmt.Sprintf("cannot tell the API server processes apart through the kubeconfig host: %v; reading through one connection", err))
			c.Conn.Close()
			c.Conn = nil // no process to keep: the plain client
			return []*model.Client{c}, []model.InstanceResult{{Instance: fb}}, notes, run, nil
		}
		if i, ok := seen[fp]; err != nil || ok {
			if ok {
				out[i].Meter.ExtraBytes += n
			}
			c.Conn.Close()
			continue
		}
		seen[fp] = len(out)
		clients = append(clients, c)
		out = append(out, adopt(cfg, c, inst, fp, want.leaseOf(fp), n, run.Connections))
	}
	nameProcesses(fb.Name, clients, out)
	shareLedger(clients)
	return clients, out, notes, run, nil
}

// shareLedger gives the connections kept one model.ProcessLedger, each
// recorded as sampling the process it was kept for.
func shareLedger(clients []*model.Client) {
	l := &model.ProcessLedger{}
	for _, c := range clients {
		c.Conn.Ledger = l
		l.Claim(c.Conn.Process.Start, c)
	}
}

// oneConnection is the reading through the kubeconfig host when fewer
// than two live instances are known: nothing to tell apart, one client
// (requests may still reach several processes: checkOneProcess says so).
func oneConnection(cfg model.Config, results []model.InstanceResult) ([]*model.Client, []model.InstanceResult, []string, BalancerRun, error) {
	fb := fallbackInstance(cfg.REST)
	notes := []string{fmt.Sprintf("none of the %d API server instances is reachable directly (%v); reading through the kubeconfig host %s, where a load balancer may answer each request from a different server", len(results), results[0].Errors[0], fb.Name)}
	c, err := cfg.ClientFor(fb)
	if err != nil {
		return nil, nil, nil, BalancerRun{}, err
	}
	for i := range results {
		notes = append(notes, fmt.Sprintf("instance %s not read directly", results[i].Instance.Name))
	}
	return []*model.Client{c}, []model.InstanceResult{{Instance: fb}}, notes, BalancerRun{Connections: 1, Bound: 1}, nil
}

// SameProcess makes sure c reaches its process before a sample: the
// process behind its connection is fingerprinted (before a later sample
// always: the connection may have closed while idle, unseen until used;
// before the first when the transport dialed again since the search), and
// new connections are opened until the process is found again, within
// the bound.
func SameProcess(ctx context.Context, cfg model.Config, c *model.Client, ir *model.InstanceResult, later bool) error {
	o := c.Conn
	if o == nil || !later && !o.Redialed() {
		return nil
	}
	bound := cfg.Balancer.ConnectionsFor(0)
	var last model.Fingerprint
	for i := 0; i < bound && ctx.Err() == nil; i++ {
		if i > 0 {
			if err := o.Replace(); err != nil {
				return err
			}
		}
		fp, n, err := FingerprintOf(ctx, c)
		if err == nil && fp == o.Process {
			ir.Meter.ExtraBytes += n
			o.Verified()
			return nil
		}
		last = fp
	}
	return fmt.Errorf("%s: the API server process read before (%s) was not found again through the load balancer after %d connection(s) (the last reached %s)", c.Inst.Name, o.Process, bound, last)
}
