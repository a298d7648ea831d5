package replay

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
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
	res, err := Run(context.Background(), sc, []Backend{NewOurs(api.ColumnUnpatched, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Columns[0].Clients {
		s := c.Name + "=" + string(c.Outcome)
		if c.DisconnectedAtSeconds != nil {
			s += "@" + english.Number(*c.DisconnectedAtSeconds)
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

// TestRequestContextDeadline: the deadline is reported, never fired on
// the wall clock; no timeout reports none.
func TestRequestContextDeadline(t *testing.T) {
	at := time.Unix(0, 0).Add(time.Minute)
	c := &requestContext{Context: context.Background(), deadline: at}
	if d, ok := c.Deadline(); !ok || !d.Equal(at) {
		t.Errorf("Deadline() = %v, %v; want %v, true", d, ok, at)
	}
	if c.Err() != nil {
		t.Errorf("a deadline in the past fired on the wall clock: %v", c.Err())
	}
	if _, ok := (&requestContext{Context: context.Background()}).Deadline(); ok {
		t.Error("no timeout reports a deadline")
	}
}

func TestGoroutineID(t *testing.T) {
	var b [64]byte
	want := string(b[:runtime.Stack(b[:], false)])
	got := GoroutineID()
	if !strings.HasPrefix(want, "goroutine "+strconv.FormatInt(got, 10)+" [") {
		t.Errorf("GoroutineID() = %d, runtime says %q", got, want)
	}
	other := make(chan int64)
	go func() { other <- GoroutineID() }()
	if o := <-other; o == got || o == 0 {
		t.Errorf("another goroutine's id %d, this one's %d", o, got)
	}
}
