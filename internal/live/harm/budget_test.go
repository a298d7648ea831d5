package harm

import (
	"os"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

func TestEstimateCut(t *testing.T) {
	t.Parallel()
	// 100k goroutines of the fixture's size: over 64 MiB and seconds.
	e := estimateFromGoroutines(100000)
	if !e.Cut() || e.Pause < time.Second {
		t.Errorf("estimate %+v: want cut at 64 MiB and over a second", e)
	}
	err := &model.PauseBudgetError{Instance: "a", Estimate: e, Budget: 250 * time.Millisecond}
	if want := "a dump would stop this server for about 9.8s and be cut at 64 MiB (about 95 MiB whole)"; err.Cost() != want {
		t.Errorf("Cost() = %q, want %q", err.Cost(), want)
	}
}

// TestCheapAnswerLooksAheadToTheLastSample: t2's two initial-phase watches
// started at 10:22:03. At a look 20 s later they are young, so a single
// sample needs no evidence; but at the first of two samples 70 s apart
// they will be 90 s into their replay at the second, and only evidence
// gathered at the first (a dump to compare, or a trace of the interval)
// decides them then.
func TestCheapAnswerLooksAheadToTheLastSample(t *testing.T) {
	t.Parallel()
	f, err := os.Open(golden.Fixture("t2", "goroutine-debug1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	profile, err := stacks.ParseDebug1(f)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := os.Open(golden.Fixture("t2", "apf-requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	requests, err := apf.ParseRequests(rf)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 10, 22, 23, 0, time.UTC)
	tests := []struct {
		name    string
		horizon time.Duration
		want    string
	}{
		{"one sample, or the last of two", 0, "2 watch requests initializing (APF dump_requests), none for longer than 30s"},
		{"the first of two, 5 s apart", 5 * time.Second, "2 watch requests initializing (APF dump_requests), none for longer than 30s by the last sample"},
		{"the first of two, 70 s apart", 70 * time.Second, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			look := CheapLook{Requests: requests, Profile: profile, At: at, Horizon: tc.horizon}
			if got := CheapAnswer(look); got != tc.want {
				t.Errorf("cheapAnswer = %q, want %q", got, tc.want)
			}
		})
	}
}
