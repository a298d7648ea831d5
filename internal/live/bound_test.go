package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestNoRedirectIsFollowed: a 302 to another loopback port, answering
// client-go's LIST or one of our GETs, is an error naming the server and
// the Location's host; nothing reaches that host, the token least of all.
func TestNoRedirectIsFollowed(t *testing.T) {
	t.Parallel()
	for _, key := range []string{fakeapiserver.DiscoveryPath, "/metrics"} {
		sink := fakeapiserver.StartSink(t)
		s := hostileServer(t, key, &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: sink.URL + "/steal?token=x"})
		cfg := hostileConfig(t, s)
		var msg string
		if key == fakeapiserver.DiscoveryPath {
			cfg.APIServers = nil
			_, err := Run(context.Background(), cfg, NewCaptures())
			var re *model.RedirectError
			if !errors.As(err, &re) {
				t.Errorf("%s: Run = %v, want a *RedirectError", key, err)
				continue
			}
			msg = err.Error()
		} else {
			res, err := Run(context.Background(), cfg, NewCaptures())
			if err != nil {
				t.Fatal(err)
			}
			msg = fetchOf(t, res, api.FileMetrics).Error
		}
		want := s.Address() + ": GET " + key + ": answered HTTP 302 with a redirect to " + sink.URL + ": not followed"
		if !strings.Contains(msg, want) || strings.Contains(msg, "steal") {
			t.Errorf("%s: error %q, want %q and no path of the Location", key, msg, want)
		}
		if got := sink.Requests(); len(got) != 0 {
			t.Errorf("%s: the redirect was followed: the other port got %d request(s), Authorization %q", key, len(got), got)
		}
	}
}

// TestGoroutineDumpIsBoundedNearTheRuntimeCut: an endless debug=2 stream
// is refused past 64 MiB, the runtime's own cut, with an error naming the
// server; collect's file of it is not left on disk.
func TestGoroutineDumpIsBoundedNearTheRuntimeCut(t *testing.T) {
	t.Parallel()
	h := &fakeapiserver.Hostility{Kind: fakeapiserver.Endless}
	s := hostileServer(t, "/debug/pprof/goroutine?debug=2", h)
	dir := t.TempDir()
	res, err := Run(context.Background(), hostileConfig(t, s), &bundle.Dir{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	fi := fetchOf(t, res, api.FileGoroutineDebug2)
	want := s.Address() + ": GET /debug/pprof/goroutine: the answer is larger than 64 MiB after decompression"
	if !strings.Contains(fi.Error, want) || fi.Bytes > model.MaxDumpBytes {
		t.Errorf("debug=2 fetch: error %q, %d bytes read; want %q within %d bytes", fi.Error, fi.Bytes, want, model.MaxDumpBytes)
	}
	if h.Sent() > model.MaxDumpBytes+fakeapiserver.FlowSlack {
		t.Errorf("the server wrote %d bytes, want at most %d", h.Sent(), model.MaxDumpBytes+fakeapiserver.FlowSlack)
	}
	p := filepath.Join(dir, bundle.SampleDir(s.Address(), 1), bundle.FileName(api.FileGoroutineDebug2))
	if st, err := os.Stat(p); err == nil {
		t.Errorf("collect left %d bytes of the refused dump in %s", st.Size(), p)
	}
}

// TestMetricsBodyBoundedAfterDecompression: an endless /metrics, a gzip
// bomb with Content-Encoding and one without (raw gzip bytes) are each an
// error naming the server past 32 MiB of text, never a silent cut.
func TestMetricsBodyBoundedAfterDecompression(t *testing.T) {
	t.Parallel()
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestSpeed)
	zw.Write(bytes.Repeat([]byte("apiserver_request_total 1\n"), (model.MaxMetricsBytes/26)+1000))
	zw.Close()
	for name, h := range map[string]*fakeapiserver.Hostility{
		"endless":       {Kind: fakeapiserver.Endless},
		"gzip bomb":     {Kind: fakeapiserver.GzipBomb},
		"raw gzip body": {Kind: fakeapiserver.ErrorBody, Status: 200, Body: raw.String()},
	} {
		s := hostileServer(t, "/metrics", h)
		res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
		if err != nil {
			t.Fatal(err)
		}
		fi := fetchOf(t, res, api.FileMetrics)
		if !strings.Contains(fi.Error, s.Address()+": GET /metrics") || !strings.Contains(fi.Error, "larger than 32 MiB after decompression") {
			t.Errorf("%s: /metrics fetch error %q, want it refused past 32 MiB", name, fi.Error)
		}
		if h.Kind == fakeapiserver.Endless && h.Sent() > model.MaxMetricsBytes+fakeapiserver.FlowSlack {
			t.Errorf("%s: the server wrote %d bytes, want at most %d", name, h.Sent(), model.MaxMetricsBytes+fakeapiserver.FlowSlack)
		}
	}
}
