package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Defaults of a scenario (documented in docs/scenario.schema.json).
const (
	DefaultTick         = time.Second
	DefaultStallTimeout = 30 * time.Second
	// DefaultWindow is the stream flow-control window client-go announces:
	// golang.org/x/net/http2 transport.go:49, transportDefaultStreamFlow.
	DefaultWindow = 4 << 20
	// DefaultBookmarkBytes is the wire size of a bookmark event.
	DefaultBookmarkBytes = 200
	// MaxClients bounds a scenario's expanded client count.
	MaxClients = 100000
	// MaxObjects bounds a scenario's object count.
	MaxObjects = 10000000
	// MaxUpdates bounds a scenario's update count (UpdateCount): each
	// update is a new object version every column keeps.
	MaxUpdates = 50000000
	// MaxDuration bounds every duration of a scenario (duration, times,
	// timeouts): 30 days of virtual time. Past it, a deadline would be
	// no deadline (and, near 292 years, overflow the clock).
	MaxDuration = 30 * 24 * time.Hour
	// MaxBytes bounds a scenario file.
	MaxBytes = 16 << 20
	// MaxDescriptionBytes bounds a scenario's description.
	MaxDescriptionBytes = 64 << 10
)

// The releases a scenario can model (Scenario.Release).
const (
	// ReleaseV137 is kube-apiserver 1.37 (k8s.io/apiserver v0.37.2): the
	// watcher goroutine starts in processInterval. The default.
	ReleaseV137 = "v1.37"
	// ReleaseV138 is kube-apiserver 1.38 (v0.38.0-beta.0): the watcher
	// goroutine starts in process, which takes the interval from its input
	// and replays it in processInitialEvents (upstream PR 141449).
	ReleaseV138 = "v1.38"
	// DefaultRelease is the release of a scenario that names none.
	DefaultRelease = ReleaseV137
)

// Releases lists the values of Scenario.Release.
func Releases() []string { return []string{ReleaseV137, ReleaseV138} }

// ModelRelease is the release the scenario models: Release, or
// DefaultRelease when it names none.
func (s *Scenario) ModelRelease() string {
	if s.Release == "" {
		return DefaultRelease
	}
	return s.Release
}

// Scenario is one replay: the objects of each resource, how they change,
// the watch clients and how they read, and for how long. It is what the
// scenario YAML decodes into; docs/scenario.schema.json describes it.
//
// A Scenario is a plain value: safe to share once Parse returned it.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Duration is how much virtual time the replay covers.
	Duration Duration `json:"duration"`
	// Tick is the virtual time step: clients connect and the tick's updates
	// arrive once per tick, clients read between them. Default 1s.
	Tick Duration `json:"tick,omitempty"`
	// StallTimeout is the patched column's timeout. Default 30s.
	StallTimeout *Duration `json:"stallTimeout,omitempty"`
	// Release is the kube-apiserver release the replay models (Releases):
	// its watcher loop in our columns and the upstream column's cacher.
	// "" is DefaultRelease.
	Release string `json:"release,omitempty"`
	// Transport is the HTTP/2 model every client uses unless it has its own.
	Transport api.Transport `json:"transport,omitempty"`
	Resources []Resource    `json:"resources"`
	Clients   []Client      `json:"clients"`
}

// Resource is one cached resource: its objects and its update streams.
// Like every type of a Scenario, a plain value.
type Resource struct {
	Name    string         `json:"name"`
	Objects []ObjectGroup  `json:"objects"`
	Updates []UpdateStream `json:"updates,omitempty"`
	// IndexedTrigger is the field the watch cache indexes watchers by, as
	// kube-apiserver does for pods ("spec.nodeName"); "" (the default) for
	// none. Clients here cannot select on it, so it only raises the cap of
	// every watch's channels from 100 to 1000 slots (upstream
	// watch_cache_history.go:173-211; a watch that did select on it would
	// get 10).
	IndexedTrigger string `json:"indexedTrigger,omitempty"`
}

// IndexedTriggerNodeName is the one indexed trigger a scenario can give a
// resource: kube-apiserver's pods index watchers by spec.nodeName
// (kubernetes pkg/registry/core/pod/storage/storage.go:96, TriggerFunc).
const IndexedTriggerNodeName = "spec.nodeName"

// ObjectGroup is Count objects of one namespace, each Bytes on the wire.
type ObjectGroup struct {
	// Namespace of the objects; "" for a cluster-scoped resource.
	Namespace string       `json:"namespace,omitempty"`
	Count     int          `json:"count"`
	Bytes     api.ByteSize `json:"bytes"`
}

// UpdateStream modifies objects round-robin at a steady rate.
type UpdateStream struct {
	// Namespace restricts the stream to one namespace's objects.
	Namespace string  `json:"namespace,omitempty"`
	PerSecond float64 `json:"perSecond"`
	// From and Until bound the stream in virtual time; Until 0 is the end.
	From  Duration `json:"from,omitempty"`
	Until Duration `json:"until,omitempty"`
}

// Duration is a time.Duration written as "30s", "10m" or a number of
// seconds.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string ("1m30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "30s" or 30 (seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q: use a Go duration such as 30s or 10m", s)
		}
		d.Duration = v
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("invalid duration %s: use a string such as \"30s\" or a number of seconds", b)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/float64(time.Second) {
		return fmt.Errorf("invalid duration %s: out of range", b)
	}
	d.Duration = time.Duration(f * float64(time.Second))
	return nil
}

// Parse reads a scenario in YAML (or JSON), rejects unknown fields, fills
// in defaults and validates it.
func Parse(r io.Reader) (*Scenario, error) {
	data, err := bounded.ReadAll(r, MaxBytes, "the scenario", "a scenario")
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	var sc Scenario
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return nil, fmt.Errorf("decoding scenario: %w", err)
	}
	if err := sc.complete(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// Marshal writes the scenario as YAML, defaults included.
func (s *Scenario) Marshal() ([]byte, error) {
	b, err := yaml.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding scenario: %w", err)
	}
	return b, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// complete fills in defaults and validates.
func (s *Scenario) complete() error {
	if !nameRE.MatchString(s.Name) {
		return fmt.Errorf("invalid scenario name %q: use lower-case letters, digits, '-' and '.'", s.Name)
	}
	if len(s.Description) > MaxDescriptionBytes {
		return fmt.Errorf("scenario %q: description is %d bytes, more than %s", s.Name, len(s.Description), bounded.Bytes(MaxDescriptionBytes))
	}
	if s.Duration.Duration <= 0 {
		return fmt.Errorf("scenario %q: duration must be positive", s.Name)
	}
	if err := checkDuration("duration", s.Duration); err != nil {
		return fmt.Errorf("scenario %q: %w", s.Name, err)
	}
	if s.Tick.Duration == 0 {
		s.Tick.Duration = DefaultTick
	}
	if s.Tick.Duration < 10*time.Millisecond || s.Tick.Duration > time.Minute {
		return fmt.Errorf("scenario %q: tick %v must be between 10ms and 1m", s.Name, s.Tick.Duration)
	}
	if s.Duration.Duration/s.Tick.Duration > 1e6 {
		return fmt.Errorf("scenario %q: duration %v is more than a million ticks of %v", s.Name, s.Duration.Duration, s.Tick.Duration)
	}
	if s.StallTimeout == nil {
		s.StallTimeout = &Duration{DefaultStallTimeout}
	}
	if s.StallTimeout.Duration <= 0 {
		return fmt.Errorf("scenario %q: stallTimeout must be positive (the patched column needs one)", s.Name)
	}
	if err := checkDuration("stallTimeout", *s.StallTimeout); err != nil {
		return fmt.Errorf("scenario %q: %w", s.Name, err)
	}
	if s.Release != "" && !slices.Contains(Releases(), s.Release) {
		return fmt.Errorf("scenario %q: unsupported release %q: use one of %s, or leave it out (%s)", s.Name, s.Release, strings.Join(Releases(), ", "), DefaultRelease)
	}
	if err := completeTransport(&s.Transport, nil); err != nil {
		return fmt.Errorf("scenario %q: transport: %w", s.Name, err)
	}
	if len(s.Resources) == 0 {
		return fmt.Errorf("scenario %q: no resources", s.Name)
	}
	seen := map[string]bool{}
	objects := 0
	for i := range s.Resources {
		r := &s.Resources[i]
		if !nameRE.MatchString(r.Name) {
			return fmt.Errorf("scenario %q: invalid resource name %q", s.Name, r.Name)
		}
		if seen[r.Name] {
			return fmt.Errorf("scenario %q: resource %q listed twice", s.Name, r.Name)
		}
		seen[r.Name] = true
		if r.IndexedTrigger != "" && r.IndexedTrigger != IndexedTriggerNodeName {
			return fmt.Errorf("scenario %q: resource %q: unsupported indexedTrigger %q: use %q or leave it out", s.Name, r.Name, r.IndexedTrigger, IndexedTriggerNodeName)
		}
		for _, g := range r.Objects {
			if g.Namespace != "" && !nameRE.MatchString(g.Namespace) {
				return fmt.Errorf("scenario %q: resource %q: invalid namespace %q", s.Name, r.Name, g.Namespace)
			}
			if g.Count < 0 || g.Bytes <= 0 || g.Bytes > 1<<30 {
				return fmt.Errorf("scenario %q: resource %q: objects need a count >= 0 and 1 B <= bytes <= 1 GiB", s.Name, r.Name)
			}
			objects += g.Count
			if objects > MaxObjects {
				return fmt.Errorf("scenario %q: more than %d objects", s.Name, MaxObjects)
			}
		}
		for j, u := range r.Updates {
			if err := u.check(j, r.Objects); err != nil {
				return fmt.Errorf("scenario %q: resource %q: %w", s.Name, r.Name, err)
			}
		}
	}
	if n := s.UpdateCount(); n > MaxUpdates {
		return fmt.Errorf("scenario %q: updates: %d updates in all (perSecond times how long each stream runs), more than %d: lower perSecond or bound the streams with from and until", s.Name, n, MaxUpdates)
	}
	if len(s.Clients) == 0 {
		return fmt.Errorf("scenario %q: no clients", s.Name)
	}
	names := map[string]bool{}
	total := 0
	for i := range s.Clients {
		c := &s.Clients[i]
		if err := c.complete(s); err != nil {
			return fmt.Errorf("scenario %q: client %q: %w", s.Name, c.Name, err)
		}
		if names[c.Name] {
			return fmt.Errorf("scenario %q: client %q listed twice", s.Name, c.Name)
		}
		names[c.Name] = true
		total += c.Count
		if total > MaxClients {
			return fmt.Errorf("scenario %q: more than %d clients", s.Name, MaxClients)
		}
	}
	return nil
}

// check validates the stream, the resource's updates[i] of objects.
func (u UpdateStream) check(i int, objects []ObjectGroup) error {
	field := fmt.Sprintf("updates[%d]", i)
	if u.PerSecond < 0 || u.PerSecond > 1e5 || math.IsNaN(u.PerSecond) {
		return fmt.Errorf("%s.perSecond %v must be between 0 and 100000", field, u.PerSecond)
	}
	if err := checkDuration(field+".from", u.From); err != nil {
		return err
	}
	if err := checkDuration(field+".until", u.Until); err != nil {
		return err
	}
	if u.Until.Duration != 0 && u.Until.Duration < u.From.Duration {
		return fmt.Errorf("%s: update stream ends before it starts", field)
	}
	if countIn(objects, u.Namespace) == 0 && u.PerSecond > 0 {
		return fmt.Errorf("%s: update stream has no objects to update in namespace %q", field, u.Namespace)
	}
	return nil
}

// checkDuration refuses a negative duration, or one past MaxDuration.
func checkDuration(field string, d Duration) error {
	switch {
	case d.Duration < 0:
		return fmt.Errorf("%s %v must not be negative: virtual time starts at 0", field, d.Duration)
	case d.Duration > MaxDuration:
		return fmt.Errorf("%s %v is more than %v, the longest a scenario's durations may be", field, d.Duration, MaxDuration)
	}
	return nil
}

// UpdateCount is how many updates the scenario's streams make in all:
// each stream's rate times how long it runs within the duration.
func (s *Scenario) UpdateCount() int64 {
	var n float64
	for _, r := range s.Resources {
		for _, u := range r.Updates {
			end := s.Duration.Duration
			if u.Until.Duration > 0 && u.Until.Duration < end {
				end = u.Until.Duration
			}
			if end > u.From.Duration {
				n += math.Floor(u.PerSecond * (end - u.From.Duration).Seconds())
			}
		}
	}
	if n > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(n)
}

func countIn(groups []ObjectGroup, ns string) int {
	n := 0
	for _, g := range groups {
		if ns == "" || g.Namespace == ns {
			n += g.Count
		}
	}
	return n
}
