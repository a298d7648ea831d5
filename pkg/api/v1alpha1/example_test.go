package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// A script reads what analyze -o json wrote (here the golden of the t2
// fixture) into the contract types and compares against the constants.
func Example() {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "internal", "cli", "testdata", "golden", "analyze-t2.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var r api.Report
	if err := json.Unmarshal(b, &r); err != nil {
		fmt.Println(err)
		return
	}
	if r.APIVersion != api.GroupVersion || r.Kind != api.KindReport {
		fmt.Println("not a report of this version:", r.APIVersion, r.Kind)
		return
	}
	fmt.Printf("%d stuck, %d slow, worst %s\n", r.Summary.StuckWatches, r.Summary.SlowWatches, r.MaxSeverity())
	for _, f := range r.Findings {
		if f.Severity.Rank() < api.SeverityWarning.Rank() {
			continue
		}
		match := api.Match("unmatched")
		if f.Client != nil {
			match = f.Client.Match
		}
		fmt.Printf("%s %s: goroutine %d, %s among %d candidates\n", f.Severity, f.Type, f.Watcher.GoroutineID, match, len(f.Candidates))
	}
	// Output:
	// 1 stuck, 1 slow, worst critical
	// critical StuckInitialEvents: goroutine 33988, ambiguous among 2 candidates
	// warning SlowInitialEvents: goroutine 33545, ambiguous among 2 candidates
}

// A replay result (the golden of the issue-137631 scenario): which clients
// each column left blocked, and which the stall timeout freed.
func ExampleReplay() {
	f, err := os.Open(filepath.Join("..", "..", "..", "internal", "replay", "testdata", "golden", "issue-137631.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	var r api.Replay
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Kind, r.Scenario)
	for _, c := range r.Columns {
		outcomes := map[api.Outcome]int{}
		for _, cl := range c.Clients {
			outcomes[cl.Outcome]++
		}
		fmt.Printf("%-9s completed %d, blocked %d, stopped %d; %d goroutines blocked\n", c.Name,
			outcomes[api.OutcomeCompleted], outcomes[api.OutcomeBlocked], outcomes[api.OutcomeStopped], c.BlockedGoroutines)
	}
	fmt.Println("freed:", r.Verdict.Freed)
	// Output:
	// Replay issue-137631
	// unpatched completed 45, blocked 5, stopped 0; 5 goroutines blocked
	// pr141899  completed 45, blocked 0, stopped 5; 0 goroutines blocked
	// complete  completed 45, blocked 0, stopped 5; 0 goroutines blocked
	// freed: [stalled-lister-1 stalled-lister-2 stalled-lister-3 stalled-lister-4 stalled-lister-5]
}
