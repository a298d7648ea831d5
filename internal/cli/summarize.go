package cli

import (
	"regexp"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/watch-doctor/watch-doctor/internal/english"
)

// numbers are what lines of one kind differ in: addresses, ports, counts.
var numbers = regexp.MustCompile(`[0-9]+`)

// summarize keeps the first english.PerKind lines of each kind, in order,
// and after the last one kept says how many more of that kind there were:
// 500 refused instances are three lines and "and 497 more like it".
// Lines of a kind differ only in their numbers.
func summarize(lines []string) []string {
	return english.Summarize(lines, func(l string) string { return numbers.ReplaceAllString(l, "#") })
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
