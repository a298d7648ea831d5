package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// plainServer is an HTTP server on loopback answering with h; the client
// reaches it through an unpinned instance, as through a kubeconfig host.
func plainServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *Client) {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	c, err := NewClient(&rest.Config{Host: s.URL}, Instance{Name: "api"}, 10*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// These tests read the transport, dump paths included; the dump
	// policy has its own (harm_test.go).
	c.dumps.Force = true
	return s, c
}

func statusBody(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":%q,"code":%d}`, msg, code)
}

// Each refused or failed GET is an error of its own type naming the
// instance and the path; a 403 names the RBAC rule that would grant it.
func TestClientGetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		status int
		msg    string
		check  func(t *testing.T, err error)
	}{
		{"401", "/metrics", http.StatusUnauthorized, "Unauthorized", func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 401 || !strings.Contains(err.Error(), "api: GET /metrics: HTTP 401: the credentials of the kubeconfig were rejected") {
				t.Errorf("err = %v, want an *HTTPError 401 saying the credentials were rejected", err)
			}
		}},
		{"403 pprof", "/debug/pprof/goroutine?debug=2", http.StatusForbidden, `forbidden: User "x" cannot get path "/debug/pprof/goroutine"`, func(t *testing.T, err error) {
			var fe *ForbiddenError
			if !errors.As(err, &fe) || !IsForbidden(err) {
				t.Fatalf("err = %v, want a *ForbiddenError", err)
			}
			want := `api: GET /debug/pprof/goroutine forbidden: missing RBAC rule nonResourceURLs: ["/debug/pprof/*"], verbs: ["get"] (forbidden: User "x" cannot get path "/debug/pprof/goroutine")`
			if err.Error() != want {
				t.Errorf("err = %q\nwant %q", err, want)
			}
		}},
		{"403 APF", "/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1", http.StatusForbidden, "forbidden", func(t *testing.T, err error) {
			var fe *ForbiddenError
			if !errors.As(err, &fe) || fe.Rule.NonResourceURL != "/debug/api_priority_and_fairness/*" || fe.Path != "/debug/api_priority_and_fairness/dump_requests" {
				t.Errorf("err = %v, want the APF rule for the path without its query", err)
			}
		}},
		{"404 pprof", "/debug/pprof/goroutine?debug=1", http.StatusNotFound, "not found", func(t *testing.T, err error) {
			var pe *ProfilingDisabledError
			if !errors.As(err, &pe) || pe.Instance != "api" {
				t.Errorf("err = %v, want a *ProfilingDisabledError", err)
			}
		}},
		{"404 APF", "/debug/api_priority_and_fairness/dump_priority_levels", http.StatusNotFound, "not found", func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 404 || !strings.Contains(he.Message, "API Priority and Fairness is disabled") {
				t.Errorf("err = %v, want an *HTTPError 404 saying APF is disabled", err)
			}
		}},
		{"404 elsewhere", "/version", http.StatusNotFound, "the server could not find the requested resource", func(t *testing.T, err error) {
			if err.Error() != "api: GET /version: HTTP 404: the server could not find the requested resource" {
				t.Errorf("err = %q", err)
			}
		}},
		{"503", "/metrics", http.StatusServiceUnavailable, "apiserver is shutting down", func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 503 || err.Error() != "api: GET /metrics: HTTP 503: apiserver is shutting down" {
				t.Errorf("err = %v, want an *HTTPError 503 with the server's message", err)
			}
			if IsForbidden(err) {
				t.Error("a 503 is not forbidden")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
				got = r.URL.RequestURI()
				statusBody(w, tc.status, tc.msg)
			})
			resp, err := c.Get(context.Background(), tc.path)
			if err == nil {
				resp.Close()
				t.Fatal("Get succeeded")
			}
			if got != tc.path {
				t.Errorf("server got %q, want %q", got, tc.path)
			}
			tc.check(t, err)
		})
	}
}

// A 200 hands over the open body, the local start time and the server's
// Date; the request is a GET asking for text.
func TestClientGetOK(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)
	_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("method %s, want GET", r.Method)
		}
		w.Header().Set("Date", date.Format(http.TimeFormat))
		io.WriteString(w, "body")
	})
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	resp, err := c.Get(context.Background(), "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "body" {
		t.Errorf("body %q, %v", b, err)
	}
	if !resp.StartedAt.Equal(now) || resp.ServerDate == nil || !resp.ServerDate.Equal(date) {
		t.Errorf("started %v, server date %v; want %v and %v", resp.StartedAt, resp.ServerDate, now, date)
	}
}

// A body cut short of its Content-Length is a read error, not a short
// success.
func TestClientTruncatedBody(t *testing.T) {
	t.Parallel()
	_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, "goroutine 1 [running]:\n")
		// The handler returns: the server closes the connection 977
		// bytes short.
	})
	resp, err := c.Get(context.Background(), "/debug/pprof/goroutine?debug=2")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	b, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read %d bytes, err %v; want io.ErrUnexpectedEOF", len(b), err)
	}
}

// The request timeout covers waiting for the answer and reading it; both
// are a *TimeoutError naming the instance, the path and what sets the
// timeout.
func TestClientTimeouts(t *testing.T) {
	// Not parallel: it waits for a request timeout of a fraction of a
	// second, which the other reads must not reach on a loaded machine.
	t.Run("no answer", func(t *testing.T) {
		_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		c.Timeout, c.TimeoutHint = 100*time.Millisecond, "--request-timeout"
		_, err := c.Get(context.Background(), "/metrics")
		var te *TimeoutError
		if !errors.As(err, &te) || te.Reading {
			t.Fatalf("err = %v, want a *TimeoutError before the answer", err)
		}
		if want := "api: GET /metrics: timed out after 100ms (--request-timeout)"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
	})
	t.Run("while reading", func(t *testing.T) {
		_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "goroutine 1 [running]:\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		})
		c.Timeout = 100 * time.Millisecond
		resp, err := c.Get(context.Background(), "/debug/pprof/goroutine?debug=2")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Close()
		_, err = io.ReadAll(resp.Body)
		var te *TimeoutError
		if !errors.As(err, &te) || !te.Reading {
			t.Fatalf("err = %v, want a *TimeoutError while reading", err)
		}
		if want := "api: GET /debug/pprof/goroutine: timed out after 100ms while reading the response"; err.Error() != want {
			t.Errorf("err = %q, want %q (no hint given)", err, want)
		}
	})
}

// Canceling the caller's context ends a request in flight at once, and is
// not mistaken for a timeout.
func TestClientCanceled(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	c.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(ctx, "/debug/pprof/goroutine?debug=2")
		done <- err
	}()
	<-arrived
	cancel()
	err := <-done
	var te *TimeoutError
	if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Errorf("err = %v, want context.Canceled and no timeout", err)
	}
}

// The bound of an answer is the path's unless the caller set one: the
// execution trace's is its byte budget, above the 64 MiB that bounds the
// other /debug/pprof/ answers (a 70 s trace of a server of 5,000 idle
// watches under request load is 64 MiB and more: it was cut there).
func TestClientGetCallerBoundWins(t *testing.T) {
	t.Parallel()
	const body = 100 << 10 // over /version's 64 KiB
	_, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", body)))
	})
	tests := []struct {
		name    string
		ctx     context.Context
		wantErr bool
	}{
		{"the path's bound", context.Background(), true},
		{"the caller's bound above it", WithLimit(context.Background(), 1<<20), false},
		{"the caller's bound below the body", WithLimit(context.Background(), 10<<10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Get(tt.ctx, "/version")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Close()
			n, err := io.Copy(io.Discard, resp.Body)
			var tl *TooLargeError
			if got := errors.As(err, &tl); got != tt.wantErr {
				t.Errorf("read %d bytes, err %v: want a *TooLargeError %v", n, err, tt.wantErr)
			}
			if !tt.wantErr && n != body {
				t.Errorf("read %d bytes, want the whole %d", n, body)
			}
		})
	}
}
