package v1alpha1

import "strings"

// Labels ClientLabel gives a finding without a user to name.
const (
	// LabelUnmatched: no executing request fits the watch.
	LabelUnmatched = "<unmatched>"
	// LabelTooManyCandidates: the match is ambiguous and too many
	// requests fit to list them.
	LabelTooManyCandidates = "? too many candidates"
	// LabelNoUser: a request matched, but the APF dump names no user.
	LabelNoUser = "-"
)

// ClientLabel names who holds the finding's watch, the one way every
// output form (table, wide, name, fleet) says it:
//   - the user of the request matched to it;
//   - when the match is ambiguous and names no user, its candidates'
//     users, "a | b" (one of them holds it), or LabelTooManyCandidates
//     when none is listed;
//   - LabelNoUser for a request matched without a user;
//   - LabelUnmatched when no request matched.
func (f Finding) ClientLabel() string {
	c := f.Client
	switch {
	case c == nil:
		return LabelUnmatched
	case c.User != "":
		return c.User
	case c.Match != MatchAmbiguous:
		return LabelNoUser
	}
	if us := f.CandidateUsers(); len(us) > 0 {
		return strings.Join(us, " | ")
	}
	return LabelTooManyCandidates
}
