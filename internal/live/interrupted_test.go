package live

import (
	"strings"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// TestInterruptedSampleSaysSo: the progress line of a sample cut short by
// cancellation says interrupted, with its counts, never "done".
func TestInterruptedSampleSaysSo(t *testing.T) {
	t.Parallel()
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	s.Started = make(chan string)
	lines := make(chan string, 100)
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, s, fakeapiserver.TokenAdmin), APIServers: []string{s.Address()}, Samples: 1, RequestTimeout: time.Hour, Clock: testingclock.NewFakeClock(time.Now()), Force: true, Progress: lineWriter{lines}}
	stop := runInBackground(cfg)
	for p := range s.Started {
		if p == "/debug/pprof/goroutine?debug=2" {
			break
		}
	}
	res, _ := stop()
	close(lines)
	var end string
	for l := range lines {
		if strings.Contains(l, "sample 1/1: "+s.Address()+": ") && !strings.Contains(l, "goroutine dump") {
			end = l
		}
	}
	if want := "interrupted (1 request(s) cut short, 0 failed)"; !strings.Contains(end, want) {
		t.Errorf("last line of the sample %q, want %q", end, want)
	}
	if failed, cut := res.Counts(); failed != 0 || cut != 1 {
		t.Errorf("Counts = %d failed, %d cut short; want 0, 1", failed, cut)
	}
}
