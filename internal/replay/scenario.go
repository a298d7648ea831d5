package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
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

// Client is one watch client, or Count identical ones.
type Client struct {
	Name string `json:"name"`
	// Count replicates the client; replicas are named name-1 ... name-N.
	Count int `json:"count,omitempty"`
	// Resource is the watched resource; default the first one.
	Resource string `json:"resource,omitempty"`
	// Model is how the application reads: "healthy", "paced R/s",
	// "stops-after N", "stops-after initial-events", "disconnects-after T".
	Model string `json:"model"`
	// Namespace scopes the watch; "" is cluster scope.
	Namespace string `json:"namespace,omitempty"`
	// InitialEvents is "watch-list" (sendInitialEvents=true, default),
	// "legacy-rv0" (resourceVersion=0, sendInitialEvents unset) or "none"
	// (sendInitialEvents=false: changes only).
	InitialEvents string `json:"initialEvents,omitempty"`
	// ResourceVersion overrides the request's resourceVersion ("" or "0").
	ResourceVersion *string `json:"resourceVersion,omitempty"`
	// Bookmarks is allowWatchBookmarks; default true.
	Bookmarks *bool `json:"bookmarks,omitempty"`
	// StartAt is when the (first) client starts its watch.
	StartAt Duration `json:"startAt,omitempty"`
	// Every staggers replicas: replica i starts at StartAt + i*Every.
	Every Duration `json:"every,omitempty"`
	// Timeout is the request's timeoutSeconds; 0 is none.
	Timeout Duration `json:"timeout,omitempty"`
	// Seats is the request's APF seats while initializing. Default 1.
	Seats int `json:"seats,omitempty"`
	// Transport overrides the scenario's transport for this client.
	Transport *api.Transport `json:"transport,omitempty"`
}

// InitialEvents modes.
const (
	InitialWatchList = "watch-list"
	InitialLegacyRV0 = "legacy-rv0"
	InitialNone      = "none"
)

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

// completeTransport fills in t's defaults, from its profile or else from
// parent when given, and validates it.
func completeTransport(t, parent *api.Transport) error {
	if t.Profile != "" {
		p, ok := profileTransport(t.Profile)
		if !ok {
			return fmt.Errorf("unknown profile %q: use one of %s", t.Profile, joinProfiles())
		}
		fillFlowControl(t, p)
	} else if parent != nil {
		t.Profile = parent.Profile
		fillFlowControl(t, *parent)
	}
	if parent != nil {
		if t.Lookahead == nil {
			t.Lookahead = parent.Lookahead
		}
		if t.BookmarkBytes == 0 {
			t.BookmarkBytes = parent.BookmarkBytes
		}
	}
	if t.Window == 0 {
		t.Window = DefaultWindow
	}
	if t.Window < 1024 || t.Window > math.MaxInt32 {
		return fmt.Errorf("window %d must be between 1024 and 2^31-1 bytes (RFC 9113 6.9.1)", t.Window)
	}
	if t.Refresh == "" {
		t.Refresh = api.RefreshGo
	}
	switch t.Refresh {
	case api.RefreshGo, api.RefreshHalfWindow:
		if t.RefreshBytes != 0 {
			return fmt.Errorf("refreshBytes %d is only for refresh: %s (refresh is %q): remove it or set refresh: %s", t.RefreshBytes, api.RefreshThreshold, t.Refresh, api.RefreshThreshold)
		}
	case api.RefreshThreshold:
		if t.RefreshBytes < 1024 || t.RefreshBytes > t.Window {
			return fmt.Errorf("refreshBytes %d must be between 1024 and the window (%d) with refresh: %s", t.RefreshBytes, t.Window, api.RefreshThreshold)
		}
	default:
		return fmt.Errorf("unsupported refresh %q: use one of %s, %s, %s", t.Refresh, api.RefreshGo, api.RefreshHalfWindow, api.RefreshThreshold)
	}
	if t.Lookahead == nil {
		one := 1
		t.Lookahead = &one
	}
	if *t.Lookahead < 0 || *t.Lookahead > 1000 {
		return fmt.Errorf("lookahead %d must be between 0 and 1000", *t.Lookahead)
	}
	if t.BookmarkBytes == 0 {
		t.BookmarkBytes = DefaultBookmarkBytes
	}
	if t.BookmarkBytes < 0 || t.BookmarkBytes > 1<<20 {
		return fmt.Errorf("bookmarkBytes %d must be between 1 and 1 MiB", t.BookmarkBytes)
	}
	return nil
}

func (c *Client) complete(s *Scenario) error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("invalid name: use lower-case letters, digits, '-' and '.'")
	}
	if c.Count == 0 {
		c.Count = 1
	}
	if c.Count < 0 || c.Count > MaxClients {
		return fmt.Errorf("count %d must be between 1 and %d", c.Count, MaxClients)
	}
	if c.Resource == "" {
		c.Resource = s.Resources[0].Name
	}
	found := false
	for _, r := range s.Resources {
		if r.Name == c.Resource {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("unknown resource %q", c.Resource)
	}
	if _, err := ParseModel(c.Model); err != nil {
		return err
	}
	if c.InitialEvents == "" {
		c.InitialEvents = InitialWatchList
	}
	switch c.InitialEvents {
	case InitialWatchList, InitialLegacyRV0, InitialNone:
	default:
		return fmt.Errorf("unsupported initialEvents %q: use one of %s, %s, %s", c.InitialEvents, InitialWatchList, InitialLegacyRV0, InitialNone)
	}
	if c.ResourceVersion != nil && *c.ResourceVersion != "" && *c.ResourceVersion != "0" {
		return fmt.Errorf("unsupported resourceVersion %q: use \"\" or \"0\" (a replay has no earlier resource versions to name)", *c.ResourceVersion)
	}
	if c.Bookmarks == nil {
		t := true
		c.Bookmarks = &t
	}
	for _, f := range []struct {
		name string
		d    Duration
	}{{"startAt", c.StartAt}, {"every", c.Every}, {"timeout", c.Timeout}} {
		if err := checkDuration(f.name, f.d); err != nil {
			return err
		}
	}
	if c.Every.Duration > 0 && time.Duration(c.Count-1) > (MaxDuration-c.StartAt.Duration)/c.Every.Duration {
		return fmt.Errorf("every %v: replica %d would start after %v, the longest a scenario's durations may be", c.Every.Duration, c.Count, MaxDuration)
	}
	if c.Seats == 0 {
		c.Seats = 1
	}
	if c.Seats < 0 || c.Seats > 1000 {
		return fmt.Errorf("seats %d must be between 1 and 1000", c.Seats)
	}
	if c.Transport != nil {
		if err := completeTransport(c.Transport, &s.Transport); err != nil {
			return fmt.Errorf("transport: %w", err)
		}
	}
	return nil
}

// request returns the watch request parameters of the client.
func (c *Client) request() (rv string, sendInitialEvents *bool) {
	t, f := true, false
	switch c.InitialEvents {
	case InitialLegacyRV0:
		rv = "0"
	case InitialNone:
		sendInitialEvents = &f
	default:
		sendInitialEvents = &t
	}
	if c.ResourceVersion != nil {
		rv = *c.ResourceVersion
	}
	return rv, sendInitialEvents
}

// fillFlowControl sets the window, refresh and refreshBytes t leaves empty
// from src; src's refreshBytes only with src's refresh.
func fillFlowControl(t *api.Transport, src api.Transport) {
	if t.Window == 0 {
		t.Window = src.Window
	}
	if t.Refresh == "" {
		t.Refresh = src.Refresh
	}
	if t.RefreshBytes == 0 && t.Refresh == src.Refresh {
		t.RefreshBytes = src.RefreshBytes
	}
}

// transport returns the client's effective transport.
func (c *Client) transport(s *Scenario) api.Transport {
	if c.Transport != nil {
		return *c.Transport
	}
	return s.Transport
}
