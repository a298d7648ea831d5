package exporter

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// Defaults of Config.
const (
	DefaultInterval     = 30 * time.Second
	DefaultJitter       = 0.1
	DefaultMaxBackoff   = 5 * time.Minute
	DefaultTopUsers     = 10
	DefaultMaxResources = 50
	DefaultMaxLevels    = 50
	DefaultMaxInstances = 20
)

// Config is what the exporter needs; the CLI builds it from flags.
type Config struct {
	// Live is how instances are found and read: REST config, pinned
	// instances, request timeout, hints. Samples, Interval, Only, Force,
	// MaxPause and Progress are set by the exporter (one cheap look, never
	// a debug=2 dump).
	Live model.Config
	// Interval is the time between looks, jittered by Jitter (a fraction:
	// 0.1 waits 0.9 to 1.1 intervals) so that replicas do not look in step.
	Interval time.Duration
	Jitter   float64
	// MaxBackoff bounds the wait after failed looks: it doubles from
	// Interval with each look in a row that read nothing.
	MaxBackoff time.Duration
	// TopUsers is how many (user, resource) rows of initializing watches
	// each instance exports, by seats held; the rest are folded into one
	// row with user="other" and resource="other".
	TopUsers int
	// MaxResources bounds the (resource, priority level) rows per
	// instance, MaxLevels the priority levels, MaxInstances the instances;
	// beyond them, rows are folded into "other".
	MaxResources int
	MaxLevels    int
	MaxInstances int
	// Trace, when its Window is set, lets a look trace the instances it
	// left undecided (trace.go); the zero value never traces.
	Trace TraceConfig
	// Clock drives the loop and the ages; nil means the real clock.
	Clock clock.WithTicker
	// Logger receives one structured record per look and per failure.
	Logger *slog.Logger
	// Rand returns a number in [0, 1) for the jitter; nil means
	// math/rand/v2.
	Rand func() float64
}

func (c *Config) setDefaults() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxBackoff < c.Interval {
		c.MaxBackoff = c.Interval
	}
	if c.TopUsers <= 0 {
		c.TopUsers = DefaultTopUsers
	}
	if c.MaxResources <= 0 {
		c.MaxResources = DefaultMaxResources
	}
	if c.MaxLevels <= 0 {
		c.MaxLevels = DefaultMaxLevels
	}
	if c.MaxInstances <= 0 {
		c.MaxInstances = DefaultMaxInstances
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	c.Live.Clock = c.Clock
	if c.Trace.Every <= 0 {
		c.Trace.Every = DefaultTraceEvery
	}
}

// Validate checks the values a caller may get wrong.
func (c Config) Validate() error {
	if c.Jitter < 0 || c.Jitter >= 1 {
		return fmt.Errorf("invalid jitter %g: want at least 0 and below 1", c.Jitter)
	}
	if c.Interval < 0 || c.MaxBackoff < 0 {
		return fmt.Errorf("invalid interval %s or backoff %s: must not be negative", c.Interval, c.MaxBackoff)
	}
	if err := c.Trace.validate(); err != nil {
		return err
	}
	if c.TopUsers < 0 || c.MaxResources < 0 || c.MaxLevels < 0 || c.MaxInstances < 0 {
		return fmt.Errorf("invalid bounds: top users %d, resources %d, levels %d, instances %d: must not be negative", c.TopUsers, c.MaxResources, c.MaxLevels, c.MaxInstances)
	}
	return nil
}

// wait is the time before the next look after failures looks in a row
// that read nothing: Interval doubled per failure up to MaxBackoff,
// jittered.
func (c Config) wait(failures int) time.Duration {
	d := c.Interval
	for i := 0; i < failures && d < c.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.MaxBackoff)
	return time.Duration(float64(d) * (1 + c.Jitter*(2*c.Rand()-1)))
}
