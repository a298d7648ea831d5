package model

import (
	"fmt"
	"io"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Target receives what is fetched. Store must consume body before
// returning. Run serializes the calls (instances are read concurrently).
type Target interface {
	Store(instance string, sample int, kind api.FileKind, body io.Reader) error
}

// Config is what Run needs; the CLI builds it from flags.
type Config struct {
	REST *rest.Config
	// APIServers, when set, are the instances to read, as HOST:PORT (no
	// discovery).
	APIServers     []string
	Samples        int
	Interval       time.Duration
	RequestTimeout time.Duration
	// MaxPause is the pause budget of a debug=2 dump: it stops the world
	// in the API server while it is written, so it is taken only when the
	// pause estimated from the cheap look (see Estimate) is within it,
	// unless Force. 0 means no budget.
	MaxPause time.Duration
	// MaxGoroutines (deprecated by MaxPause) also refuses a debug=2 dump
	// of a server running more goroutines, unless Force; 0 means no limit.
	MaxGoroutines int
	// Force takes the debug=2 dump whatever the cheap look and the budget
	// say.
	Force bool
	// Parallel bounds the instances read at once; 0 means 4.
	Parallel int
	// ProgressEvery is how often a fetch still waiting is reported on
	// Progress; 0 means 5 s.
	ProgressEvery time.Duration
	Clock         clock.Clock
	// Progress receives one line per step; nil for none.
	Progress io.Writer
	// Only, when set, limits the fetches to these kinds (the metrics
	// command reads /metrics alone).
	Only []api.FileKind
	// Words name the settings that progress lines, notes and errors
	// point at, in the caller's terms.
	Words english.Words
	// Trace chooses the evidence between the samples and bounds the
	// execution trace (trace.go).
	Trace TraceConfig
	// Balancer bounds the connections opened through the kubeconfig host
	// when the instances' own addresses do not answer (discovery/balancer.go).
	Balancer BalancerBound
}

func (c Config) Wants(k api.FileKind) bool {
	if len(c.Only) == 0 {
		return true
	}
	for _, o := range c.Only {
		if o == k {
			return true
		}
	}
	return false
}

// ClientFor is newClient with the config's timeout and its hint.
func (c Config) ClientFor(inst Instance) (*Client, error) {
	cl, err := NewClient(c.REST, inst, c.RequestTimeout, c.Clock.Now)
	if cl != nil {
		cl.TimeoutHint, cl.dumps = c.Words.RequestTimeout, c.DumpPolicy()
	}
	return cl, err
}

func (c Config) Progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}
