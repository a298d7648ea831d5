package model

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestGuardRefusesRedirectsAndHTML: the guard beneath every request turns
// a 3xx into a *RedirectError, never followed and naming only the
// Location's scheme and host, and a 200 HTML page into an *HTMLError;
// both, and an answer past its bound, are the guard's refusals.
func TestGuardRefusesRedirectsAndHTML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		h     http.HandlerFunc
		want  string
		check func(error) bool
	}{
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/steal?token=x", http.StatusFound)
		}, "api-host: GET /metrics: answered HTTP 302 with a redirect to http://127.0.0.1:1: not followed", func(err error) bool {
			var re *RedirectError
			return errors.As(err, &re) && re.Status == http.StatusFound
		}},
		{"a redirect without a Location", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTemporaryRedirect)
		}, "answered HTTP 307 with no Location: not followed", func(err error) bool {
			var re *RedirectError
			return errors.As(err, &re) && re.Location == ""
		}},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "Text/HTML; charset=utf-8")
			io.WriteString(w, "<html>sign in</html>")
		}, "GET /metrics: answered with an HTML page, not the Kubernetes API", func(err error) bool {
			var he *HTMLError
			return errors.As(err, &he)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := plainServer(t, tc.h)
			resp, err := c.Get(context.Background(), "/metrics")
			if err == nil {
				resp.Close()
				t.Fatal("no error")
			}
			msg := strings.ReplaceAll(err.Error(), strings.TrimPrefix(s.URL, "http://"), "api-host")
			if !strings.Contains(msg, strings.TrimPrefix(tc.want, "api-host")) || strings.Contains(msg, "steal") || !tc.check(err) {
				t.Errorf("err %q (%T), want %q and no path of the Location", msg, err, tc.want)
			}
			if GuardError(err) == nil || !RefusedByGuard(err) {
				t.Errorf("err %v is not the guard's refusal", err)
			}
		})
	}
	plain := errors.New("connection refused")
	if GuardError(plain) != nil || RefusedByGuard(plain) || TooLarge(plain) != nil {
		t.Errorf("%v is taken for the guard's refusal", plain)
	}
}

// TestGuardBoundsTheBody: an answer past its bound is a *TooLargeError
// naming the server and the path, and a refusal of the guard.
func TestGuardBoundsTheBody(t *testing.T) {
	t.Parallel()
	s, c := plainServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 4<<10))
	})
	resp, err := c.Get(WithLimit(context.Background(), 1<<10), "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Close()
	_, err = ReadAll(resp.Body, "api: reading /version")
	tl := TooLarge(err)
	if tl == nil || tl.Limit != 1<<10 || !RefusedByGuard(err) || !strings.HasPrefix(err.Error(), strings.TrimPrefix(s.URL, "http://")+": GET /version: the answer is larger than") {
		t.Errorf("err %v, want a *TooLargeError of 1 KiB naming the server and path", err)
	}
}

// TestOwnConn: a connection kept for one process is redialed when its
// transport dialed again since it was verified; Replace takes a new
// transport, not yet verified.
func TestOwnConn(t *testing.T) {
	t.Parallel()
	var dials atomic.Int64
	fresh := 0
	o := &OwnConn{Hc: &http.Client{}, Dials: &dials, Fresh: func() (*http.Client, *atomic.Int64, error) {
		fresh++
		var d atomic.Int64
		d.Store(1)
		return &http.Client{}, &d, nil
	}}
	dials.Store(1)
	if !o.Redialed() {
		t.Error("a dial never verified is not said redialed")
	}
	o.Verified()
	if o.Redialed() {
		t.Error("verified, yet redialed")
	}
	dials.Add(1)
	if !o.Redialed() {
		t.Error("dialed again, not said redialed")
	}
	if err := o.Replace(); err != nil || fresh != 1 || !o.Redialed() {
		t.Errorf("Replace: %v, %d transports built, redialed %v; want one, not verified", err, fresh, o.Redialed())
	}
	c := &Client{Conn: o}
	if c.httpClient() != o.Hc {
		t.Error("the client does not use its own connection")
	}
	o.Close()
	o.Fresh = func() (*http.Client, *atomic.Int64, error) { return nil, nil, errors.New("dial refused") }
	if err := o.Replace(); err == nil || o.Hc == nil {
		t.Errorf("Replace with no transport: %v, and the connection %v kept", err, o.Hc)
	}
}
