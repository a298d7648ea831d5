package tracefetch

import (
	"github.com/watch-doctor/watch-doctor/internal/golden"

	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
)

// The trace stops early only when at least as many initial-phase watchers
// as sample A counted were seen, and every one of them moved.
func TestStopWhenAllProgressed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		min                 int
		initial, progressed int
		want                bool
	}{
		{2, 2, 2, true},
		{2, 2, 1, false},
		{2, 1, 1, false},
		{0, 0, 0, false},
		{0, 3, 3, true},
	}
	for _, tt := range tests {
		got := stopWhenAllProgressed(tt.min)(watches.TraceProgress{Initial: tt.initial, Progressed: tt.progressed})
		if got != tt.want {
			t.Errorf("min %d, %d initial, %d progressed: stop %v, want %v", tt.min, tt.initial, tt.progressed, got, tt.want)
		}
	}
}

func TestWindowText(t *testing.T) {
	t.Parallel()
	cut := errors.New("unexpected EOF")
	summary := func(stopped bool) *watches.Trace {
		return &watches.Trace{Window: 9*time.Second + 600*time.Millisecond, Bytes: 3 << 19, StoppedEarly: stopped}
	}
	cfg := model.Config{Interval: 30 * time.Second, Trace: model.TraceConfig{Budget: 64 << 20}}
	hinted := cfg
	hinted.Words.TraceBudget = "--trace-budget"
	for _, tc := range []struct {
		name string
		tr   *model.TraceResult
		cfg  model.Config
		want string
	}{
		{"unread", &model.TraceResult{Err: cut}, cfg, "nothing proven: unexpected EOF"},
		{"whole", &model.TraceResult{Summary: summary(false)}, cfg, "the trace covers 10s (1.5 MiB)"},
		{"stopped early", &model.TraceResult{Summary: summary(true)}, cfg, "the trace covers 10s (1.5 MiB); stopped early after 10s: every initial-phase watcher had progressed"},
		{"interrupted", &model.TraceResult{Summary: summary(true), Interrupted: true}, cfg, "the trace covers 10s (1.5 MiB); interrupted after 10s"},
		{"cut short", &model.TraceResult{Summary: summary(false), Err: cut}, cfg, "the trace covers 10s (1.5 MiB); the trace was cut short, so only the 10s read count: unexpected EOF"},
		{"budget", &model.TraceResult{Summary: summary(false), BudgetCut: true}, cfg, "the trace covers 10s (1.5 MiB); the trace budget of 64.0 MiB cut the 30s interval"},
		{"budget, hint", &model.TraceResult{Summary: summary(false), BudgetCut: true}, hinted, "the trace covers 10s (1.5 MiB); the trace budget of 64.0 MiB cut the 30s interval (--trace-budget)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, windowText(tc.tr, tc.cfg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestForecastText(t *testing.T) {
	t.Parallel()
	if got := forecastText(time.Minute, time.Minute); got != "" {
		t.Errorf("forecastText(fits) = %q, want none", got)
	}
	if got, want := forecastText(50*time.Second, 70*time.Second), ", which at that rate ends it after about 50s: it stops at the budget"; got != want {
		t.Errorf("forecastText(50s of 70s) = %q, want %q", got, want)
	}
}

// budgetStop stops before the generation that would not fit, reckoning
// the next as the largest so far and a quarter more.
func TestBudgetStop(t *testing.T) {
	t.Parallel()
	b := &budgetStop{max: 1000}
	for i, tc := range []struct {
		bytes int64
		want  bool
	}{
		{100, false}, // largest 100: 100+125 fits
		{300, false}, // largest 200: 300+250 fits
		{500, false}, // 500+250 = 750 fits
		{700, false}, // 700+250 = 950 fits
		{800, true},  // 800+250 = 1050 does not
	} {
		if got := b.reached(watches.TraceProgress{Bytes: tc.bytes}); got != tc.want {
			t.Errorf("step %d at %d bytes: reached %v, want %v", i, tc.bytes, got, tc.want)
		}
	}
}

// The window a budget buys, estimated from the probe's generations:
//   - the seed server's real 20 s trace (2,223 goroutines, 20
//     generations): the estimate of its own window is within a tenth above
//     its real size;
//   - a 1 s probe of a 42,000-goroutine server under load as make
//     bench-live measured it (about 2.8 MB in two generations, the whole
//     trace 1.0 to 1.2 MiB/s; docs/diagnose-at-scale.md): the default
//     budget gives the full 70 s, where the probe's own rate gave 42 s;
//   - a probe of one generation: its rate, as before.
func TestTraceCost(t *testing.T) {
	f, err := os.Open(filepath.Join(golden.Root(), "testdata", "kube-apiserver-v1.37.2", "trace-seed", "bundle", "127.0.0.1", "trace.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seed, err := watches.ReadTrace(f, watches.TraceOptions{Source: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	c := probeCost(seed, seed.Bytes, seed.Window)
	t.Logf("seed trace: %d bytes in %s: estimated %.0f (%s)", seed.Bytes, seed.Window, c.bytes(seed.Window), c)
	if est := c.bytes(seed.Window); est < float64(seed.Bytes) || est > 1.1*float64(seed.Bytes) {
		t.Errorf("seed trace: %d bytes in %s, %d generations (smallest %d): estimated %.0f bytes (%s), want within a tenth above", seed.Bytes, seed.Window, seed.Generations, seed.SmallestGeneration, est, c)
	}

	const probeBytes = 2_800_000
	server42k := &watches.Trace{Generations: 2, SmallestGeneration: 1_300_000, Bytes: probeBytes}
	tests := []struct {
		name     string
		probe    *watches.Trace
		budget   int64
		interval time.Duration
		want     time.Duration
		rate     float64
	}{
		{"42,000 goroutines, the default budget", server42k, model.DefaultTraceBudget - probeBytes, 70 * time.Second, 70 * time.Second, 1_500_000},
		{"42,000 goroutines, 64 MiB", server42k, 64<<20 - probeBytes, 70 * time.Second, 37 * time.Second, 1_500_000},
		{"one generation: its rate", &watches.Trace{Generations: 1, SmallestGeneration: probeBytes, Bytes: probeBytes}, model.DefaultTraceBudget - probeBytes, 70 * time.Second, 42 * time.Second, probeBytes},
		{"no summary: its rate", nil, model.DefaultTraceBudget - probeBytes, 70 * time.Second, 42 * time.Second, probeBytes},
		{"a budget below one generation", server42k, 1_000_000, 70 * time.Second, 0, 1_500_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := probeCost(tc.probe, probeBytes, time.Second)
			got := min(tc.interval, c.fit(tc.budget))
			if got != tc.want || c.rate() != tc.rate {
				t.Errorf("window %s at %.0f B/s (%s), want %s at %.0f B/s", got, c.rate(), c, tc.want, tc.rate)
			}
		})
	}
}

func TestGoAtLeast122(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{"go1.26.8": true, "go1.22rc1": true, "go1.21.13": false, "go1.9": false, "devel go1.27-abc": true, "": true} {
		if got := GoAtLeast122(v); got != want {
			t.Errorf("GoAtLeast122(%q) = %v, want %v", v, got, want)
		}
	}
}
