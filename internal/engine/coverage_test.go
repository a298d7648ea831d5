package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// A run that read fewer instances than the identity leases say are live
// gives no all-clear: the report carries the coverage and is incomplete,
// naming what was not reached.
func TestRunFewerInstancesThanLiveIsIncomplete(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	now := time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)
	s.Endpoints = []string{s.Address(), "127.0.0.1:1"} // the second does not answer
	s.Leases = []fakeapiserver.Lease{
		{Name: "apiserver-a", Hostname: "cp-a", Renewed: now, DurationSeconds: 3600},
		{Name: "apiserver-b", Hostname: "cp-b", Renewed: now, DurationSeconds: 3600},
	}
	cfg := liveConfig(t, s, false)
	res, err := Run(context.Background(), Config{Live: cfg})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Report.Instances
	if c == nil || c.Read != 1 || c.Live != 2 || len(c.NotReached) != 1 || c.NotReached[0] != "127.0.0.1:1" {
		t.Fatalf("coverage %+v, want 1 of 2, 127.0.0.1:1 not reached", c)
	}
	want := "1 of 2 instances read (identity leases); not reached: 127.0.0.1:1: a stuck watch on an instance not read is in no finding"
	if len(res.Report.Incomplete) == 0 || res.Report.Incomplete[len(res.Report.Incomplete)-1] != want {
		t.Errorf("incomplete %q, want it to end with %q", res.Report.Incomplete, want)
	}

	// Every live instance read: complete as far as the instances go.
	s.Endpoints = []string{s.Address()}
	s.Leases = s.Leases[:1]
	res, err = Run(context.Background(), Config{Live: liveConfig(t, s, false)})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Report.Instances; c == nil || !c.Complete() {
		t.Errorf("coverage %+v, want 1 of 1", c)
	}
	for _, line := range res.Report.Incomplete {
		if strings.Contains(line, "instances read") {
			t.Errorf("incomplete %q with every instance read", line)
		}
	}
}

// Through the balancer, a server whose /metrics names its identity lease
// (apiserver_id_hash) says which it holds.
func TestRunNamesTheLeaseOfEachServerThroughTheBalancer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 10, 23, 9, 0, time.UTC)
	var servers []*fakeapiserver.Server
	// printf apiserver-X | sha256sum
	hashes := map[string]string{"cp-a": "sha256:b5b662adf0e40b9253722f985e321a40f8f9592881365a3ffc91fb56c54da2dc"}
	for i, host := range []string{"cp-a", "cp-b"} {
		line := ""
		if h, ok := hashes[host]; ok {
			line = `apiserver_authorization_config_controller_automatic_reloads_total{apiserver_id_hash="` + h + `",status="success"} 1` + "\n"
		}
		s := fakeapiserver.Start(t, fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
			if name == "metrics.txt" {
				return append(b, line...)
			}
			return b
		}))
		s.ProcessStart = []float64{1764410000 + float64(i)}
		s.Endpoints = []string{"127.0.0.1:1", "127.0.0.1:2"}
		s.Leases = []fakeapiserver.Lease{{Name: "apiserver-a", Hostname: "cp-a", Renewed: now, DurationSeconds: 3600}, {Name: "apiserver-b", Hostname: "cp-b", Renewed: now, DurationSeconds: 3600}}
		servers = append(servers, s)
	}
	lb := fakeapiserver.StartBalancer(t, fakeapiserver.RoundRobin(2), servers...)
	cfg := liveConfig(t, servers[0], false)
	cfg.REST, cfg.Samples = fakeapiserver.RESTConfigAt(t, servers[0], lb.URL(), fakeapiserver.TokenAdmin), 1
	res, err := Run(context.Background(), Config{Live: cfg})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, a := range res.Report.APIServers {
		for _, n := range a.Notes {
			if strings.HasPrefix(n, leaseNote) {
				named++
				if n != leaseNote+"cp-a" {
					t.Errorf("%s: %q, want cp-a's lease", a.Name, n)
				}
			}
		}
	}
	if len(res.Report.APIServers) != 2 || named != 1 {
		t.Errorf("%d servers, %d naming a lease; want 2, one naming cp-a's", len(res.Report.APIServers), named)
	}
}
