package exporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

// TestDoNoHarmServeNeverDumps: serve's looks, plain and traced, whether
// the trace works or fails as a hostile server makes it fail, request no
// debug=2 dump. The fake server fails the test on any.
func TestDoNoHarmServeNeverDumps(t *testing.T) {
	t.Parallel()
	t.Run("plain look", func(t *testing.T) {
		t.Parallel()
		e, s, _, _ := newTest(t, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"), filepath.Join(seedRepro, "t2"))
		s.ForbidDumps(t)
		if !e.LookOnce(context.Background()) {
			t.Fatal("the look read nothing")
		}
	})
	for _, tc := range []struct {
		name string
		h    *fakeapiserver.Hostility
	}{
		{"trace works", nil},
		{"trace already running", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 500, Body: "Could not enable tracing: execution tracer already enabled\n"}},
		{"403", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 403, Body: "forbidden"}},
		{"404", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 404, Body: "404 page not found"}},
		{"garbage", &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 200, Body: "\xff\x00\x7f garbage"}},
		{"HTML", &fakeapiserver.Hostility{Kind: fakeapiserver.HTML}},
		{"a 302", &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: "https://127.0.0.1:1/"}},
		{"a gzip bomb", &fakeapiserver.Hostility{Kind: fakeapiserver.GzipBomb}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, s, _, _ := newTraceTest(t, TraceConfig{Window: 20 * time.Second})
			s.ForbidDumps(t)
			if tc.h != nil {
				s.Hostile = map[string]*fakeapiserver.Hostility{"/debug/pprof/trace": tc.h}
			}
			if !e.LookOnce(context.Background()) {
				t.Fatal("the look read nothing")
			}
		})
	}
}
