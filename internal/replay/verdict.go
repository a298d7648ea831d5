package replay

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// verdictOf compares the columns: upstream against unpatched (fidelity),
// and unpatched against pr141899 and complete (what each fix changes).
func verdictOf(res *api.Replay) api.Verdict {
	var v api.Verdict
	byName := map[string]*api.Column{}
	for i := range res.Columns {
		byName[res.Columns[i].Name] = &res.Columns[i]
	}
	up, un := byName[api.ColumnUpstream], byName[api.ColumnUnpatched]
	pr, co := byName[api.ColumnPR141899], byName[api.ColumnComplete]
	if up != nil && un != nil {
		if diffs := CompareColumns(up, un); len(diffs) == 0 {
			v.Fidelity = "identical"
		} else {
			v.Fidelity = "different"
			v.Notes = append(v.Notes, diffs...)
		}
	}
	// The stall timeout stops the same watchers in both fixed columns;
	// compare against whichever is there.
	fixed := pr
	if fixed == nil {
		fixed = co
	}
	if un == nil || fixed == nil {
		v.Summary = "nothing to compare: the unpatched column and a fixed one (pr141899 or complete) are needed"
		if v.Fidelity == "different" {
			v.Summary += "; WARNING: our unpatched cacher disagrees with upstream (see notes)"
		}
		return v
	}
	for i, c := range un.Clients {
		p := fixed.Clients[i]
		switch {
		case c.Outcome == api.OutcomeBlocked && p.Outcome == api.OutcomeStopped:
			v.Freed = append(v.Freed, c.Name)
		case c.Outcome == api.OutcomeCompleted && p.Outcome == api.OutcomeStopped:
			v.Cut = append(v.Cut, c.Name)
		case c.Outcome != p.Outcome:
			v.Notes = append(v.Notes, fmt.Sprintf("%s: %s unpatched, %s %s", c.Name, c.Outcome, p.Outcome, fixed.Name))
		}
		if p.Outcome == api.OutcomeStopped {
			if pr != nil && pr.Clients[i].HandlerBlockedInWrite {
				v.HeldByPR141899 = append(v.HeldByPR141899, c.Name)
			}
			if co != nil && co.Clients[i].ClientTold {
				v.ToldByComplete = append(v.ToldByComplete, c.Name)
			}
		}
	}
	sort.Strings(v.Notes)
	var parts []string
	if len(v.Freed) > 0 {
		parts = append(parts, fmt.Sprintf("the stall timeout stops the watcher of %d stuck watch%s (%d blocked goroutine%s left, %d unpatched)",
			len(v.Freed), english.Plural(len(v.Freed), "", "es"), fixed.BlockedGoroutines, english.Plural(fixed.BlockedGoroutines, "", "s"), un.BlockedGoroutines))
		if pr != nil {
			parts = append(parts, fmt.Sprintf("pr141899 leaves %d handler%s blocked writing and %s APF seat-seconds held (%s unpatched), telling %s",
				len(v.HeldByPR141899), english.Plural(len(v.HeldByPR141899), "", "s"), english.Number(pr.APFSeatSeconds), english.Number(un.APFSeatSeconds),
				toldText(pr, v.Freed, un)))
		}
		if co != nil {
			freed := len(v.Freed) - countNamed(co, v.Freed, un, func(c api.ClientResult) bool { return c.HandlerBlockedInWrite })
			parts = append(parts, fmt.Sprintf("complete frees %d handler%s (%s APF seat-seconds) and tells %d client%s",
				freed, english.Plural(freed, "", "s"), english.Number(co.APFSeatSeconds),
				len(v.ToldByComplete), english.Plural(len(v.ToldByComplete), "", "s")))
		}
	}
	if loops := loopPart(res, un, fixed); loops != "" {
		parts = append(parts, loops)
	}
	if len(v.Cut) > 0 {
		parts = append(parts, fmt.Sprintf("the stall timeout CUTS %d client%s that complete%s without it: %s", len(v.Cut), english.Plural(len(v.Cut), "", "s"), english.Plural(len(v.Cut), "s", ""), strings.Join(v.Cut, ", ")))
	} else {
		parts = append(parts, "the stall timeout cuts no client that completes without it")
	}
	if len(v.Freed) == 0 && un.BlockedGoroutines == 0 {
		parts = append([]string{"nothing is stuck unpatched"}, parts...)
	}
	v.Summary = strings.Join(parts, "; ")
	if v.Fidelity == "different" {
		v.Summary += "; WARNING: our unpatched cacher disagrees with upstream (see notes)"
	}
	return v
}

// loopPart says, when clients that relist came back, how often each column
// closed watches and saw clients come back, with the APF seat-seconds of
// the returns, and names the clients that had their initial events
// unpatched but never do in fixed; "" when no client came back.
func loopPart(res *api.Replay, un, fixed *api.Column) string {
	var cols []string
	back := false
	for _, c := range res.Columns {
		back = back || c.Returns > 0
		cols = append(cols, fmt.Sprintf("%s %d and %d (%s APF seat-seconds)", c.Name, c.Closures, c.Returns, english.Number(c.ReturnSeatSeconds)))
	}
	if !back {
		return ""
	}
	s := "clients that relist loop, closures and returns: " + strings.Join(cols, ", ")
	var never []string
	for i, c := range un.Clients {
		if f := fixed.Clients[i]; c.InitialDoneAtSeconds != nil && f.InitialDoneAtSeconds == nil && f.Returns > 0 {
			never = append(never, c.Name)
		}
	}
	if len(never) > 0 {
		s += fmt.Sprintf("; with the stall timeout %s never %s initial events (%s), unpatched %s", strings.Join(never, ", "), english.Plural(len(never), "has its", "have their"), fixed.Name, english.Plural(len(never), "it did", "they did"))
	}
	return s
}

// countNamed counts the clients of col named in names for which pred holds
// (ref is the column names are taken from; clients are in the same order in
// every column).
func countNamed(col *api.Column, names []string, ref *api.Column, pred func(api.ClientResult) bool) int {
	n := 0
	for i, c := range ref.Clients {
		if slices.Contains(names, c.Name) && pred(col.Clients[i]) {
			n++
		}
	}
	return n
}

// toldText says how many of the named clients col told.
func toldText(col *api.Column, names []string, ref *api.Column) string {
	n := countNamed(col, names, ref, func(c api.ClientResult) bool { return c.ClientTold })
	if n == 0 {
		return "no client"
	}
	return fmt.Sprintf("%d client%s", n, english.Plural(n, "", "s"))
}
