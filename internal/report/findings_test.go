package report

import (
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestClientCell: the CLIENT cell is the finding's ClientLabel; an
// ambiguous finding names its candidates' users, never one of them alone.
func TestClientCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    api.Finding
		want string
	}{
		{"matched", api.Finding{Client: &api.Client{User: "kcm", Match: api.MatchExact}}, "kcm"},
		{"no user", api.Finding{Client: &api.Client{Match: api.MatchExact}}, "-"},
		{"ambiguous", api.Finding{Client: &api.Client{Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}, {User: "y"}, {User: "x"}}}, "x | y"},
		{"too many", api.Finding{Client: &api.Client{Match: api.MatchAmbiguous}}, "? too many candidates"},
		{"ambiguous, user known", api.Finding{Client: &api.Client{User: "kcm", Match: api.MatchAmbiguous}, Candidates: []api.Request{{User: "x"}}}, "kcm"},
		{"unmatched", api.Finding{}, "<unmatched>"},
	} {
		if got := findingRow(tc.f, false, false)[2]; got != tc.want {
			t.Errorf("%s: CLIENT cell = %q, want %q", tc.name, got, tc.want)
		}
	}
}
