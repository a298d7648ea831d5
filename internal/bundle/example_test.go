package bundle_test

import (
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
)

// Inputs are recognised by content, whatever their name.
func ExampleOpen() {
	for _, in := range []string{
		"goroutine 1 [running]:\nmain.main()\n\t/src/main.go:9 +0x1d\n",
		"goroutine profile: total 1\n1 @ 0x1\n#\t0x1\tmain.main+0x1\t/src/main.go:9\n\n",
		"PriorityLevelName, FlowSchemaName, QueueIndex\n",
		"# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 2223\n",
		"2026-11-29T10:24:32Z\n",
	} {
		kind, _, err := bundle.Open(strings.NewReader(in))
		fmt.Println(kind, err)
	}
	// Output:
	// goroutine-debug2 <nil>
	// goroutine-debug1 <nil>
	// apf-requests <nil>
	// metrics <nil>
	// captured-at <nil>
}
