package diagnosis

import api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"

// groupKey is what findings alike share: every field of an
// api.FindingGroup's key (what the findings table shows of a finding),
// comparable.
type groupKey struct {
	typ                             api.FindingType
	sev                             api.Severity
	server, client, verb, path, res string
	phase                           api.Phase
	blocked                         int // -1 when unknown
	seats, each                     int
	match                           api.Match
}

// keyOf is the group key of f.
func keyOf(f *api.Finding) groupKey {
	k := groupKey{typ: f.Type, sev: f.Severity, server: f.APIServer, client: f.ClientLabel(), phase: f.Phase, blocked: -1, each: len(f.GoroutineIDs)}
	if f.BlockedMinutes != nil {
		k.blocked = *f.BlockedMinutes
	}
	if c := f.Client; c != nil {
		k.verb, k.path, k.res, k.seats, k.match = c.Verb, c.Path, c.Resource, c.Seats, c.Match
	}
	return k
}

// groupFindings buckets the findings alike, as panicparse buckets
// goroutines with identical stacks: each set of at least api.GroupAtLeast
// findings with one key is an api.FindingGroup, listed in the order of its
// first member, its members' indices ascending. It runs once, on the
// sorted findings of the finished report, so every output form reads the
// same groups. nil when no set is large enough.
func groupFindings(findings []api.Finding) []api.FindingGroup {
	keys := make([]groupKey, len(findings))
	members := map[groupKey][]int{}
	for i := range findings {
		keys[i] = keyOf(&findings[i])
		members[keys[i]] = append(members[keys[i]], i)
	}
	var groups []api.FindingGroup
	for i, k := range keys {
		m := members[k]
		if len(m) < api.GroupAtLeast || m[0] != i {
			continue
		}
		f := &findings[i]
		g := api.FindingGroup{Type: f.Type, Severity: f.Severity, APIServer: f.APIServer, Client: k.client, Phase: f.Phase,
			GoroutinesEach: k.each, Count: len(m), Findings: m}
		if f.BlockedMinutes != nil {
			b := *f.BlockedMinutes
			g.BlockedMinutes = &b
		}
		if c := f.Client; c != nil {
			g.Verb, g.Path, g.Resource, g.Seats, g.Match = c.Verb, c.Path, c.Resource, c.Seats, c.Match
		}
		groups = append(groups, g)
	}
	return groups
}
