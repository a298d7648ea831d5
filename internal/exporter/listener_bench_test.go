package exporter

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
)

// BenchmarkScrapeUnderAbuse is how long a scrape of /metrics takes over a
// new connection while connections are held open on loopback: 64 idle
// kept-alive ones, or 1,500 sending a header slowly (issue 35: 15 s and
// 20 s, timed out, before the cap closed connections without a request in
// flight). Serve's own server and timeouts; the abuse is opened anew,
// untimed, before each scrape. Figures: docs/serve.md.
func BenchmarkScrapeUnderAbuse(b *testing.B) {
	e, _, _, _ := newTest(b, fakeapiserver.TokenAdmin, filepath.Join(seedRepro, "t1"))
	for _, tc := range []struct {
		name, kind string
		n          int
	}{
		{"idle-64", "idle", MaxConnections},
		{"slow-header-1500", "slow-header", 1500},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := e.server()
			serveLimited(srv, l, MaxConnections)
			b.Cleanup(func() { srv.Close() })
			addr := l.Addr().String()
			for b.Loop() {
				b.StopTimer()
				held := abuse(b, addr, tc.kind, tc.n)
				b.StartTimer()
				if code, ok := scrape(b, addr); code != http.StatusOK || !ok {
					b.Fatalf("scrape: status %d, registry served %v", code, ok)
				}
				b.StopTimer()
				for _, c := range held {
					c.Close()
				}
				b.StartTimer()
			}
		})
	}
}
