package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Client GETs debug endpoints of one instance over a connection pinned to
// it. Safe for concurrent use.
type Client struct {
	Inst    Instance
	base    *url.URL
	http    *http.Client
	Timeout time.Duration
	// TimeoutHint names what sets timeout, for TimeoutError.
	TimeoutHint string
	now         func() time.Time
	// dumps is the run's rule on debug=2 dumps (dumppolicy.go), checked on
	// every request.
	dumps DumpPolicy
	// Conn is set on a client through the kubeconfig host that holds one
	// connection of its own to one process (discovery/balancer.go); nil otherwise.
	Conn *OwnConn
}

// NewClient builds a client for inst from the kubeconfig's rest.Config
// (credentials, TLS, impersonation). Each request gets timeout.
func NewClient(cfg *rest.Config, inst Instance, timeout time.Duration, now func() time.Time) (*Client, error) {
	pc, err := PinnedConfig(GuardedConfig(cfg), inst)
	if err != nil {
		return nil, err
	}
	pc.Timeout = 0 // each fetch has its own deadline
	hc, err := rest.HTTPClientFor(pc)
	if err != nil {
		return nil, fmt.Errorf("%s: building an HTTP client: %w", inst.Name, err)
	}
	base, err := url.Parse(pc.Host)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid server %q: %w", inst.Name, pc.Host, err)
	}
	if base.Scheme == "" {
		base, _ = url.Parse("https://" + pc.Host)
	}
	// The debug endpoints sit at the server's root, under any path prefix
	// of the kubeconfig server URL (Rancher, auth proxies:
	// https://host/k8s/clusters/c-abc); APIPath ("/api") is for the core
	// API group only.
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	if now == nil {
		now = time.Now
	}
	return &Client{Inst: inst, base: base, http: hc, Timeout: timeout, now: now}, nil
}

// response is an open response body with what is known of the fetch.
type response struct {
	Body io.ReadCloser
	// StartedAt is the local time the request was sent.
	StartedAt time.Time
	// ServerDate is the response's Date header: the API server's clock.
	ServerDate *time.Time
	cancel     context.CancelFunc
}

// Close releases the response and its deadline.
func (r *response) Close() error {
	err := r.Body.Close()
	r.cancel()
	return err
}

// Get requests path (with its query) and returns the open body of a 200
// answer; any other status is an error naming the instance and path (a
// 403 names the missing RBAC rule). The deadline covers reading the body.
func (c *Client) Get(ctx context.Context, pathAndQuery string) (*response, error) {
	ref, err := url.Parse(pathAndQuery)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid path %q: %w", c.Inst.Name, pathAndQuery, err)
	}
	if err := c.guardDump(ctx, ref); err != nil {
		return nil, err
	}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + ref.Path
	u.RawQuery = ref.RawQuery
	var cctx context.Context
	var cancel context.CancelFunc
	if c.Timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, c.Timeout)
	} else {
		cctx, cancel = context.WithCancel(ctx)
	}
	// A bound the caller set wins over the path's: the trace's is its
	// budget (tracefetch/tracefetch.go), above the 64 MiB of the other profiles.
	lctx := cctx
	if _, set := ctx.Value(limitKey{}).(int64); !set {
		lctx = WithLimit(cctx, limitFor(ref.Path, ref.Query()))
	}
	req, err := http.NewRequestWithContext(lctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/plain, application/json, */*")
	started := c.now()
	resp, err := c.httpClient().Do(req)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(cctx.Err(), context.DeadlineExceeded) {
			return nil, &TimeoutError{Instance: c.Inst.Name, Path: ref.Path, After: c.Timeout, Hint: c.TimeoutHint}
		}
		if g := GuardError(err); g != nil {
			return nil, g
		}
		return nil, fmt.Errorf("%s: GET %s: %w", c.Inst.Name, ref.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		cancel()
		return nil, statusError(c.Inst.Name, ref.Path, resp.StatusCode, body)
	}
	r := &response{Body: &deadlineBody{rc: resp.Body, ctx: cctx, timeout: TimeoutError{Instance: c.Inst.Name, Path: ref.Path, After: c.Timeout, Reading: true, Hint: c.TimeoutHint}}, StartedAt: started, cancel: cancel}
	if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		d = d.UTC()
		r.ServerDate = &d
	}
	return r, nil
}

// TimeoutError is a request that did not finish within the client's
// timeout.
type TimeoutError struct {
	Instance string
	Path     string
	After    time.Duration
	// Reading is set when the server had begun to answer.
	Reading bool
	// Hint names what sets the timeout (Config.Words.RequestTimeout).
	Hint string
}

func (e *TimeoutError) Error() string {
	s := fmt.Sprintf("%s: GET %s: timed out after %s", e.Instance, e.Path, e.After)
	if e.Reading {
		s += " while reading the response"
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// deadlineBody names a deadline hit while reading the body.
type deadlineBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	timeout TimeoutError
}

func (d *deadlineBody) Read(p []byte) (int, error) {
	n, err := d.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && errors.Is(d.ctx.Err(), context.DeadlineExceeded) {
		te := d.timeout
		err = &te
	}
	return n, err
}

func (d *deadlineBody) Close() error { return d.rc.Close() }
