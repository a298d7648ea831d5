package model

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

func TestLimitFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		path, query string
		want        int64
	}{
		{"/metrics", "", MaxMetricsBytes},
		{"/version", "", maxVersionBytes},
		{"/debug/api_priority_and_fairness/dump_requests", "", maxAPFBytes},
		{"/debug/pprof/goroutine", "debug=2", MaxDumpBytes},
		{"/debug/pprof/goroutine", "debug=1", maxProfileBytes},
		{"/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", "", MaxListBytes},
	} {
		t.Run(tt.path+"?"+tt.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			if got := limitFor(tt.path, q); got != tt.want {
				t.Errorf("limitFor = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestReadAllNamesWhatFailed(t *testing.T) {
	t.Parallel()
	tl := &TooLargeError{Source: "a: GET /metrics", Limit: 1}
	if _, err := ReadAll(iotestErr{tl}, "a: reading /metrics"); TooLarge(err) != tl {
		t.Errorf("ReadAll of a too large answer: %v, want the TooLargeError itself", err)
	}
	boom := errors.New("connection reset")
	if _, err := ReadAll(iotestErr{boom}, "a: reading /metrics"); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "a: reading /metrics: ") {
		t.Errorf("ReadAll of a failed read: %v, want it named and wrapped", err)
	}
}

func TestReadMetricsTextDecompressesWithinTheBound(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("go_goroutines 3\n"))
	zw.Close()
	b, err := ReadMetricsText(&gz, "a")
	if err != nil || string(b) != "go_goroutines 3\n" {
		t.Errorf("ReadMetricsText(gzip) = %q, %v", b, err)
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// TestMetricsBodyBoundedAfterDecompression: an endless /metrics, a gzip
// bomb with Content-Encoding and one without (raw gzip bytes) are each an
// error naming the server past 32 MiB of text, never a silent cut.
func TestMetricsBodyBoundedAfterDecompression(t *testing.T) {
	t.Parallel()
	var raw bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&raw, gzip.BestSpeed)
	zw.Write(bytes.Repeat([]byte("apiserver_request_total 1\n"), (MaxMetricsBytes/26)+1000))
	zw.Close()
	for name, h := range map[string]*fakeapiserver.Hostility{
		"endless":       {Kind: fakeapiserver.Endless},
		"gzip bomb":     {Kind: fakeapiserver.GzipBomb},
		"raw gzip body": {Kind: fakeapiserver.ErrorBody, Status: 200, Body: raw.String()},
	} {
		s, c := hostileClient(t, "/metrics", h)
		err := getMetrics(c)
		if err == nil || !strings.Contains(err.Error(), s.Address()+": GET /metrics") || !strings.Contains(err.Error(), "larger than 32 MiB after decompression") {
			t.Errorf("%s: /metrics error %v, want it refused past 32 MiB", name, err)
		}
		if h.Kind == fakeapiserver.Endless && h.Sent() > MaxMetricsBytes+fakeapiserver.FlowSlack {
			t.Errorf("%s: the server wrote %d bytes, want at most %d", name, h.Sent(), MaxMetricsBytes+fakeapiserver.FlowSlack)
		}
	}
}
