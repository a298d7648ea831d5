package report

import (
	"fmt"
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// candidateLines names, under the summary, the candidate requests of each
// ambiguous finding, in the order of the findings. In table format the
// members of a group (the report's api.FindingGroup buckets) whose
// candidates are the same share one line, where the first of them was,
// naming a few of their goroutines and counting the rest; -o wide keeps a
// line per finding.
func candidateLines(t *text, findings []api.Finding, groups []api.FindingGroup) {
	shared := map[int][]int64{} // first member -> the group's watcher goroutines
	skip := map[int]bool{}
	if !t.opts.wide() {
		for _, g := range groups {
			if ids, ok := sharedCandidates(findings, g.Findings); ok {
				shared[g.Findings[0]] = ids
				for _, m := range g.Findings[1:] {
					skip[m] = true
				}
			}
		}
	}
	for i, f := range findings {
		switch {
		case !ambiguous(f) || skip[i]:
		case shared[i] != nil:
			t.printf("  %s goroutines %s: one of these is each one's request: %s\n", f.Type, idsAbbrev(shared[i], 3), candidateList(f, t.opts.wide()))
		default:
			t.printf("  %s goroutine %d: one of these is its request: %s\n", f.Type, f.Watcher.GoroutineID, candidateList(f, t.opts.wide()))
		}
	}
}

// ambiguous reports whether f names candidates for its request.
func ambiguous(f api.Finding) bool {
	return f.Client != nil && f.Client.Match == api.MatchAmbiguous && len(f.Candidates) > 0
}

// sharedCandidates gives the watcher goroutines of members, the findings of
// one group, when every one is ambiguous among the same candidates.
func sharedCandidates(findings []api.Finding, members []int) ([]int64, bool) {
	if len(members) == 0 || members[0] < 0 || members[len(members)-1] >= len(findings) || !ambiguous(findings[members[0]]) {
		return nil, false
	}
	list := candidateList(findings[members[0]], false)
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		if !ambiguous(findings[m]) || (m != members[0] && candidateList(findings[m], false) != list) {
			return nil, false
		}
		ids = append(ids, findings[m].Watcher.GoroutineID)
	}
	return ids, true
}

// idsAbbrev lists the first n ids and counts the others.
func idsAbbrev(ids []int64, n int) string {
	if len(ids) <= n {
		return joinIDs(ids)
	}
	return fmt.Sprintf("%s and %d more", joinIDs(ids[:n]), len(ids)-n)
}

// candidateList names each candidate request, with its audit join: in
// the table its first pod (or its first source address), -o wide all of
// them and its user agent.
func candidateList(f api.Finding, wide bool) string {
	var cs []string
	for _, c := range f.Candidates {
		cs = append(cs, fmt.Sprintf("%s (%s %s, started %s%s)", EscapeCell(c.User), EscapeCell(c.Verb), EscapeCell(c.Path), c.StartTime.Format("15:04:05.000"), candidateSource(c, wide)))
	}
	return strings.Join(cs, "; ")
}

// candidateSource is what the audit join and the pods lookup gave of a
// candidate, as ", from ..." or ", pod ..."; "" for nothing.
func candidateSource(c api.Request, wide bool) string {
	pods := make([]string, len(c.Pods))
	for i, p := range c.Pods {
		pods[i] = EscapeCell(p.Namespace + "/" + p.Name)
		if wide && p.Owner != "" {
			pods[i] += " (" + EscapeCell(p.Owner) + ")"
		}
	}
	ips := make([]string, len(c.SourceIPs))
	for i, ip := range c.SourceIPs {
		ips[i] = EscapeCell(ip)
	}
	if !wide {
		switch {
		case len(pods) > 1:
			return fmt.Sprintf(", pod %s +%d", pods[0], len(pods)-1)
		case len(pods) == 1:
			return ", pod " + pods[0]
		case len(ips) > 0:
			return ", from " + ips[0]
		}
		return ""
	}
	var out string
	if len(ips) > 0 {
		out += ", from " + strings.Join(ips, " ")
	}
	if c.UserAgent != "" {
		out += ", user agent " + EscapeCell(c.UserAgent)
	}
	if len(pods) > 0 {
		out += ", pods " + strings.Join(pods, " ")
	}
	return out
}
