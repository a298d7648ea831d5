package cli

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// perKind is how many lines of one kind a list of warnings or errors
// shows before "and N more like it".
const perKind = 3

// numbers are what lines of one kind differ in: addresses, ports, counts.
var numbers = regexp.MustCompile(`[0-9]+`)

// summarize keeps the first perKind lines of each kind, in order, and
// after the last one kept says how many more of that kind there were:
// 500 refused instances are three lines and "and 497 more like it".
// Lines of a kind differ only in their numbers.
func summarize(lines []string) []string {
	if len(lines) <= perKind {
		return lines
	}
	kind := make([]string, len(lines))
	count := map[string]int{}
	for i, l := range lines {
		kind[i] = numbers.ReplaceAllString(l, "#")
		count[kind[i]]++
	}
	shown := map[string]int{}
	var out []string
	for i, l := range lines {
		k := kind[i]
		shown[k]++
		switch n := shown[k]; {
		case n < perKind:
			out = append(out, l)
		case n == perKind:
			out = append(out, l)
			if more := count[k] - perKind; more > 0 {
				out = append(out, fmt.Sprintf("and %d more like it", more))
			}
		}
	}
	return out
}

var silenceKlogOnce sync.Once

// silenceKlog stops client-go's klog lines ("E1201 ... request.go:1198]
// Unexpected error when reading response body") from reaching stderr raw:
// every error they report is also returned to us, and said once, escaped,
// in our words.
func silenceKlog() {
	silenceKlogOnce.Do(func() {
		// A logger set takes every klog call, contextual ones included,
		// and the stderr threshold does not apply to it.
		klog.SetLogger(logr.Discard())
	})
}
