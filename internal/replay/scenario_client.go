package replay

import (
	"fmt"
	"math"
	"time"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

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
	// Relist makes the client watch again when the server ends its watch
	// (relist.go): only for models that keep reading (healthy, paced).
	Relist bool `json:"relist,omitempty"`
}

// InitialEvents modes.
const (
	InitialWatchList = "watch-list"
	InitialLegacyRV0 = "legacy-rv0"
	InitialNone      = "none"
)

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
	m, err := ParseModel(c.Model)
	if err != nil {
		return err
	}
	if c.Relist && m.Kind != ModelHealthy && m.Kind != ModelPaced {
		return fmt.Errorf("relist needs a model that keeps reading (%q or %q), not %q: a client that stops reading never meets the end of its watch, and one that leaves does not come back", ModelHealthy, "paced R/s", c.Model)
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
