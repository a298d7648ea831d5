package v1alpha1

import "testing"

func TestClientLabel(t *testing.T) {
	tests := []struct {
		name string
		f    Finding
		want string
	}{
		{"unmatched", Finding{}, "<unmatched>"},
		{"exact", Finding{Client: &Client{User: "alice", Match: MatchExact}}, "alice"},
		{"ambiguous, one user", Finding{Client: &Client{User: "alice", Match: MatchAmbiguous}, Candidates: []Request{{User: "alice"}, {User: "alice"}}}, "alice"},
		{"ambiguous, candidates", Finding{Client: &Client{Match: MatchAmbiguous}, Candidates: []Request{{User: "a"}, {User: "b"}, {User: "a"}}}, "a | b"},
		{"ambiguous, none listed", Finding{Client: &Client{Match: MatchAmbiguous}}, "? too many candidates"},
		{"matched without a user", Finding{Client: &Client{Match: MatchLikely}}, "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.ClientLabel(); got != tc.want {
				t.Errorf("ClientLabel() = %q, want %q", got, tc.want)
			}
		})
	}
}
