package replay

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ModelKind names how a client's application reads its watch.
type ModelKind string

// The client models.
const (
	// ModelHealthy reads every event as soon as it arrives.
	ModelHealthy ModelKind = "healthy"
	// ModelPaced reads at most Rate events per second: slow but progressing
	// (the fixture's paced-reader reads one every 400 ms).
	ModelPaced ModelKind = "paced"
	// ModelStopsAfter reads Events events, or its initial events, then
	// nothing (the reproduction of kubernetes issue 131721 reads one).
	ModelStopsAfter ModelKind = "stops-after"
	// ModelDisconnectsAfter reads everything and closes its connection
	// After its start.
	ModelDisconnectsAfter ModelKind = "disconnects-after"
)

// Model is a parsed client model. A plain value.
type Model struct {
	Kind ModelKind
	// Rate is events per second (paced).
	Rate float64
	// Events is how many events are read before stopping (stops-after).
	Events int
	// AfterInitialEvents: stops-after initial-events, i.e. once the initial
	// events (and the initial-events-end bookmark, if asked for) are read.
	AfterInitialEvents bool
	// After is when the client disconnects, from its start.
	After time.Duration
}

// String writes the model as ParseModel reads it.
func (m Model) String() string {
	switch m.Kind {
	case ModelPaced:
		return fmt.Sprintf("paced %s/s", strconv.FormatFloat(m.Rate, 'f', -1, 64))
	case ModelStopsAfter:
		if m.AfterInitialEvents {
			return "stops-after initial-events"
		}
		return fmt.Sprintf("stops-after %d", m.Events)
	case ModelDisconnectsAfter:
		return fmt.Sprintf("disconnects-after %s", m.After)
	}
	return string(m.Kind)
}

const modelHelp = `use one of "healthy", "paced R/s" (e.g. "paced 2.5/s"), "stops-after N", "stops-after initial-events", "disconnects-after T" (e.g. "disconnects-after 2m")`

// ParseModel reads a client model: "healthy", "paced 2.5/s",
// "stops-after 1", "stops-after initial-events" or "disconnects-after 2m".
func ParseModel(s string) (Model, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Model{}, fmt.Errorf("empty model: %s", modelHelp)
	}
	switch ModelKind(f[0]) {
	case ModelHealthy:
		if len(f) != 1 {
			return Model{}, fmt.Errorf("invalid model %q: healthy takes no argument", s)
		}
		return Model{Kind: ModelHealthy}, nil
	case ModelPaced:
		if len(f) != 2 || !strings.HasSuffix(f[1], "/s") {
			return Model{}, fmt.Errorf("invalid model %q: %s", s, modelHelp)
		}
		r, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "/s"), 64)
		if err != nil || !(r > 0) || r > 1e6 || math.IsInf(r, 0) {
			return Model{}, fmt.Errorf("invalid model %q: the rate must be a positive number of events per second, at most 1000000", s)
		}
		return Model{Kind: ModelPaced, Rate: r}, nil
	case ModelStopsAfter:
		if len(f) != 2 {
			return Model{}, fmt.Errorf("invalid model %q: %s", s, modelHelp)
		}
		if f[1] == "initial-events" {
			return Model{Kind: ModelStopsAfter, AfterInitialEvents: true}, nil
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return Model{}, fmt.Errorf("invalid model %q: N must be a number of events >= 0 or initial-events", s)
		}
		return Model{Kind: ModelStopsAfter, Events: n}, nil
	case ModelDisconnectsAfter:
		if len(f) != 2 {
			return Model{}, fmt.Errorf("invalid model %q: %s", s, modelHelp)
		}
		d, err := time.ParseDuration(f[1])
		if err != nil || d <= 0 {
			return Model{}, fmt.Errorf("invalid model %q: T must be a positive duration such as 90s", s)
		}
		return Model{Kind: ModelDisconnectsAfter, After: d}, nil
	}
	return Model{}, fmt.Errorf("unsupported model %q: %s", s, modelHelp)
}
