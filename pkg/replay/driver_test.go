package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRequestEnds covers the ways a request ends from the client's side:
// a client that disconnects frees its watcher in every column; a request
// timeout frees it only when the handler is between two writes, as the
// API server's handler only watches its timeout there
// (endpoints/handlers/watch.go:423-441): a handler blocked writing to a
// client that stopped reading never sees it.
func TestRequestEnds(t *testing.T) {
	sc, err := Parse(strings.NewReader(`
name: request-ends
duration: 3m
resources:
- name: pods
  objects:
  - {namespace: ns, count: 400, bytes: 20Ki}
clients:
- name: leaves
  model: disconnects-after 30s
  namespace: ns
- name: stuck-with-timeout
  model: stops-after 1
  namespace: ns
  timeout: 60s
- name: healthy-with-timeout
  model: healthy
  namespace: ns
  timeout: 60s
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, []Backend{NewOurs(ColumnUnpatched, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Columns[0].Clients {
		s := c.Name + "=" + string(c.Outcome)
		if c.DisconnectedAtSeconds != nil {
			s += "@" + formatFloat(*c.DisconnectedAtSeconds)
		}
		got = append(got, s)
	}
	want := []string{"leaves=disconnected@30", "stuck-with-timeout=blocked", "healthy-with-timeout=disconnected@60"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if n := res.Columns[0].WatcherGoroutines; n != 1 {
		t.Errorf("watcher goroutines alive at the end: %d, want 1 (the stuck one)", n)
	}
}
