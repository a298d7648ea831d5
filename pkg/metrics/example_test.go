package metrics_test

import (
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// Parse a /metrics capture of kube-apiserver, map it to the watch model and
// read the watchers of pods and the seats held in global-default.
func Example() {
	f, err := os.Open("../../testdata/kube-apiserver-v1.37.2/seed-repro/t2/metrics.txt")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sample, err := metrics.Parse(f, "t2/metrics.txt")
	if err != nil {
		log.Fatal(err)
	}
	snap := metrics.Extract(sample)

	fmt.Println("release:", snap.Version)
	fmt.Println("goroutines:", snap.Goroutines)
	for _, r := range snap.Resources {
		if r.Name() == "pods" {
			fmt.Printf("pods: %v watchers, %v init events, %v terminated watchers\n", r.Watchers, r.InitEvents, r.TerminatedWatchers)
		}
	}
	for _, pl := range snap.PriorityLevels {
		if pl.ExecutingSeats > 0 {
			fmt.Printf("priority level %s: %v of %v seats\n", pl.Name, pl.ExecutingSeats, pl.LimitSeats)
		}
	}
	for _, m := range snap.Missing {
		fmt.Printf("missing %s: read as zero: %v\n", m.Names[0], m.ReadAsZero)
	}
	// Output:
	// release: v1.37 (kubernetes_build_info v1.37.2)
	// goroutines: 2230
	// pods: 4 watchers, 2000 init events, 0 terminated watchers
	// priority level exempt: 1 of 0 seats
	// priority level global-default: 2 of 49 seats
	// missing apiserver_registered_watchers: read as zero: false
	// missing apiserver_terminated_watchers_total: read as zero: true
}

// Two samples of one server give per-second rates; a counter that went
// down (the process restarted) counts from zero instead of going negative.
func ExampleRates() {
	const before = `# TYPE process_start_time_seconds gauge
process_start_time_seconds 1.7e+09
# TYPE apiserver_watch_cache_events_dispatched_total counter
apiserver_watch_cache_events_dispatched_total{group="",resource="pods"} 5000
`
	const after = `# TYPE process_start_time_seconds gauge
process_start_time_seconds 1.70000005e+09
# TYPE apiserver_watch_cache_events_dispatched_total counter
apiserver_watch_cache_events_dispatched_total{group="",resource="pods"} 300
`
	first, err := metrics.Parse(strings.NewReader(before), "before")
	if err != nil {
		log.Fatal(err)
	}
	second, err := metrics.Parse(strings.NewReader(after), "after")
	if err != nil {
		log.Fatal(err)
	}
	rs, err := metrics.Rates(metrics.ExtractRelease(first, metrics.Release{Major: 1, Minor: 37}),
		metrics.ExtractRelease(second, metrics.Release{Major: 1, Minor: 37}), time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rs.Resources {
		fmt.Printf("%s: %.0f events dispatched/s (restarted: %v)\n", r.Current.Name(), r.EventsDispatchedPerSecond, rs.Restarted)
	}
	// Output:
	// pods: 5 events dispatched/s (restarted: true)
}
