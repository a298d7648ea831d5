package metrics

import (
	"fmt"
	"strings"
)

// resolveKinds merges rows known only by kind (apiserver_watch_events_* before
// 1.34) into the row of the one resource in the same group whose name is a
// plural of the kind; rows that match none or several stay kind rows.
func (e *extractor) resolveKinds() {
	byGroup := map[string]map[string]bool{}
	for k := range e.rows {
		if k.resource != "" {
			if byGroup[k.group] == nil {
				byGroup[k.group] = map[string]bool{}
			}
			byGroup[k.group][k.resource] = true
		}
	}
	var unmatched []string
	for _, k := range sortedKeys(e.rows) {
		if k.kind == "" {
			continue
		}
		var hits []string
		for _, c := range pluralCandidates(k.kind) {
			if byGroup[k.group][c] {
				hits = append(hits, c)
			}
		}
		if len(hits) != 1 {
			unmatched = append(unmatched, (&Resource{Group: k.group, Kind: k.kind}).Name())
			continue
		}
		from := e.rows[k]
		to := e.rows[rowKey{group: k.group, resource: hits[0]}]
		src, dst := resourceValues(from), resourceValues(to)
		for i := range src {
			if !Absent(*src[i]) {
				*dst[i] = addNaN(*dst[i], *src[i])
			}
		}
		delete(e.rows, k)
	}
	if len(unmatched) > 0 {
		e.snap.Notes = append(e.snap.Notes, fmt.Sprintf("watch events labelled by kind (before 1.34) with no resource of that name in the sample, kept as kind rows: %s", strings.Join(unmatched, ", ")))
	}
}

// pluralCandidates lists resource names a kind may have: lower-case plural
// forms, and the kind itself (Endpoints -> endpoints).
func pluralCandidates(kind string) []string {
	k := strings.ToLower(kind)
	out := []string{k + "s", k}
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		out = append(out, k+"es")
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		out = append(out, k[:len(k)-1]+"ies")
	}
	return out
}
