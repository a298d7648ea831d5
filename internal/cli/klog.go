package cli

import (
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

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
