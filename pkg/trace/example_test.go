package trace_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/trace"
)

// An execution trace of this process: a goroutine parked in a channel
// receive before the trace began shows no state change in the window.
func ExampleRead() {
	st, release, err := captureSelf()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	sum, rerr := trace.Read(bytes.NewReader(st.data.Bytes()), trace.Options{
		Source: "self",
		// Keep only the goroutine parked in stuckLoop.
		Keep: func(stack []trace.Frame) bool {
			for _, f := range stack {
				if strings.HasSuffix(f.Func, ".stuckLoop") {
					return true
				}
			}
			return false
		},
	})
	if rerr != nil {
		fmt.Println(rerr)
		return
	}
	for _, g := range sum.Goroutines {
		fmt.Printf("%s -> %s, %d transitions, no change for the whole window: %t\n",
			g.StartState, g.EndState, g.Transitions, g.LongestGap == sum.Window)
	}
	// Output:
	// waiting -> waiting, 0 transitions, no change for the whole window: true
}
