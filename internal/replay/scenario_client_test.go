package replay

import (
	"fmt"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestTransportProfileComplete checks how a profile fills a transport:
// what it sets, what explicit fields keep, what a client without a
// profile inherits, and the errors.
func TestTransportProfileComplete(t *testing.T) {
	parent := api.Transport{Profile: api.ProfileNghttp2}
	if err := completeTransport(&parent, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tr      api.Transport
		parent  *api.Transport
		want    api.Transport // Lookahead and BookmarkBytes not compared
		wantErr string
	}{
		{name: "go", tr: api.Transport{Profile: api.ProfileGo},
			want: api.Transport{Profile: api.ProfileGo, Window: 4 << 20, Refresh: api.RefreshGo}},
		{name: "half-window", tr: api.Transport{Profile: api.ProfileHalfWindow},
			want: api.Transport{Profile: api.ProfileHalfWindow, Window: 4 << 20, Refresh: api.RefreshHalfWindow}},
		{name: "nghttp2", tr: api.Transport{Profile: api.ProfileNghttp2},
			want: api.Transport{Profile: api.ProfileNghttp2, Window: 4608 << 10, Refresh: api.RefreshThreshold, RefreshBytes: 1536 << 10}},
		{name: "http1", tr: api.Transport{Profile: api.ProfileHTTP1},
			want: api.Transport{Profile: api.ProfileHTTP1, Window: 4352 << 10, Refresh: api.RefreshThreshold, RefreshBytes: 1920 << 10}},
		{name: "explicit fields win over the profile", tr: api.Transport{Profile: api.ProfileHTTP1, Window: 8 << 20, RefreshBytes: 2 << 20},
			want: api.Transport{Profile: api.ProfileHTTP1, Window: 8 << 20, Refresh: api.RefreshThreshold, RefreshBytes: 2 << 20}},
		{name: "another refresh drops the profile's refreshBytes", tr: api.Transport{Profile: api.ProfileNghttp2, Refresh: api.RefreshGo},
			want: api.Transport{Profile: api.ProfileNghttp2, Window: 4608 << 10, Refresh: api.RefreshGo}},
		{name: "a client without a profile inherits the scenario's", tr: api.Transport{}, parent: &parent,
			want: api.Transport{Profile: api.ProfileNghttp2, Window: 4608 << 10, Refresh: api.RefreshThreshold, RefreshBytes: 1536 << 10}},
		{name: "a client's own profile replaces the scenario's", tr: api.Transport{Profile: api.ProfileGo}, parent: &parent,
			want: api.Transport{Profile: api.ProfileGo, Window: 4 << 20, Refresh: api.RefreshGo}},
		{name: "no profile: client-go's defaults", tr: api.Transport{},
			want: api.Transport{Window: 4 << 20, Refresh: api.RefreshGo}},
		{name: "unknown profile", tr: api.Transport{Profile: "okhttp"},
			wantErr: `unknown profile "okhttp": use one of go, nghttp2, http1, half-window`},
		{name: "refreshBytes without threshold", tr: api.Transport{RefreshBytes: 4096},
			wantErr: `refreshBytes 4096 is only for refresh: threshold (refresh is "go")`},
		{name: "threshold without refreshBytes", tr: api.Transport{Refresh: api.RefreshThreshold},
			wantErr: "refreshBytes 0 must be between 1024 and the window (4194304) with refresh: threshold"},
		{name: "refreshBytes over the window", tr: api.Transport{Profile: api.ProfileHTTP1, Window: 1 << 20},
			wantErr: "refreshBytes 1966080 must be between 1024 and the window (1048576) with refresh: threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.tr
			err := completeTransport(&tr, tt.parent)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tr.Lookahead, tr.BookmarkBytes = nil, 0
			if tr != tt.want {
				t.Errorf("got %+v, want %+v", tr, tt.want)
			}
		})
	}
}

func TestClientComplete(t *testing.T) {
	sc := &Scenario{Resources: []Resource{{Name: "pods"}, {Name: "nodes"}}}
	rv := func(s string) *string { return &s }
	tests := []struct {
		name    string
		c       Client
		wantErr string
	}{
		{name: "valid", c: Client{Name: "a", Model: "healthy"}},
		{name: "name", c: Client{Name: "A_b", Model: "healthy"}, wantErr: "invalid name: use lower-case letters, digits, '-' and '.'"},
		{name: "count", c: Client{Name: "a", Model: "healthy", Count: -1}, wantErr: "count -1 must be between 1 and"},
		{name: "resource", c: Client{Name: "a", Model: "healthy", Resource: "secrets"}, wantErr: `unknown resource "secrets"`},
		{name: "initial events", c: Client{Name: "a", Model: "healthy", InitialEvents: "all"}, wantErr: `unsupported initialEvents "all": use one of watch-list, legacy-rv0, none`},
		{name: "resource version", c: Client{Name: "a", Model: "healthy", ResourceVersion: rv("17")}, wantErr: `unsupported resourceVersion "17"`},
		{name: "seats", c: Client{Name: "a", Model: "healthy", Seats: 1001}, wantErr: "seats 1001 must be between 1 and 1000"},
		{name: "transport", c: Client{Name: "a", Model: "healthy", Transport: &api.Transport{Profile: "okhttp"}}, wantErr: `transport: unknown profile "okhttp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			err := c.complete(sc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("complete() error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("count %d resource %s initial %s bookmarks %v seats %d", c.Count, c.Resource, c.InitialEvents, *c.Bookmarks, c.Seats)
			if want := "count 1 resource pods initial watch-list bookmarks true seats 1"; got != want {
				t.Errorf("defaults: %s, want %s", got, want)
			}
		})
	}
}

func TestClientRequest(t *testing.T) {
	zero := "0"
	tests := []struct {
		c       Client
		wantRV  string
		wantSIE string
	}{
		{c: Client{InitialEvents: InitialWatchList}, wantSIE: "true"},
		{c: Client{InitialEvents: InitialLegacyRV0}, wantRV: "0", wantSIE: "unset"},
		{c: Client{InitialEvents: InitialNone}, wantSIE: "false"},
		{c: Client{InitialEvents: InitialWatchList, ResourceVersion: &zero}, wantRV: "0", wantSIE: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.c.InitialEvents, func(t *testing.T) {
			rv, sie := tt.c.request()
			got := "unset"
			if sie != nil {
				got = fmt.Sprint(*sie)
			}
			if rv != tt.wantRV || got != tt.wantSIE {
				t.Errorf("request() = %q, %s; want %q, %s", rv, got, tt.wantRV, tt.wantSIE)
			}
		})
	}
}
