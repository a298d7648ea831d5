package report

import (
	"fmt"
	"strings"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// candidateLines names, under the summary, the candidate requests of each
// ambiguous finding, in the order of the findings. In table format at
// least groupAtLeast findings of one type with the same candidates share
// one line, where the first of them was, naming a few of their goroutines
// and counting the rest; -o wide keeps a line per finding.
func candidateLines(t *text, findings []api.Finding) {
	type group struct {
		ids     []int64
		printed bool
	}
	keys := make([]string, len(findings))
	groups := map[string]*group{}
	for i, f := range findings {
		if f.Client == nil || f.Client.Match != api.MatchAmbiguous || len(f.Candidates) == 0 {
			continue
		}
		keys[i] = string(f.Type) + "\x00" + candidateList(f)
		g := groups[keys[i]]
		if g == nil {
			g = &group{}
			groups[keys[i]] = g
		}
		g.ids = append(g.ids, f.Watcher.GoroutineID)
	}
	for i, f := range findings {
		g := groups[keys[i]]
		switch {
		case keys[i] == "":
		case len(g.ids) < groupAtLeast || t.opts.wide():
			t.printf("  %s goroutine %d: one of these is its request: %s\n", f.Type, f.Watcher.GoroutineID, candidateList(f))
		case !g.printed:
			g.printed = true
			t.printf("  %s goroutines %s: one of these is each one's request: %s\n", f.Type, idsAbbrev(g.ids, 3), candidateList(f))
		}
	}
}

// idsAbbrev lists the first n ids and counts the others.
func idsAbbrev(ids []int64, n int) string {
	if len(ids) <= n {
		return joinIDs(ids)
	}
	return fmt.Sprintf("%s and %d more", joinIDs(ids[:n]), len(ids)-n)
}

func candidateList(f api.Finding) string {
	var cs []string
	for _, c := range f.Candidates {
		cs = append(cs, fmt.Sprintf("%s (%s %s, started %s)", EscapeCell(c.User), EscapeCell(c.Verb), EscapeCell(c.Path), c.StartTime.Format("15:04:05.000")))
	}
	return strings.Join(cs, "; ")
}
