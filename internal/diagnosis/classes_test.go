package diagnosis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// allowedByName maps each resource to the object types it may be served
// by ("?" for watchers of unknown type).
func allowedByName(m *matcher) map[string][]string {
	out := map[string][]string{}
	for r, cs := range m.allowed {
		for _, c := range cs {
			name := "?"
			if c != wild {
				name = m.classes[c]
			}
			out[m.resources[r]] = append(out[m.resources[r]], name)
		}
	}
	return out
}

func TestInferClasses(t *testing.T) {
	at := t0.Add(time.Hour)
	req := func(res string) apf.Request { return resourceRequest("u", res, t0) }
	tests := []struct {
		name      string
		ws        []api.Watcher
		reqs      []apf.Request
		want      map[string][]string
		typesUsed bool
	}{
		{"counts force one assignment",
			[]api.Watcher{typed(10, 1, "0xa"), typed(20, 1, "0xa"), typed(30, 1, "0xb")},
			[]apf.Request{req("pods"), req("pods"), req("configmaps")},
			map[string][]string{"/pods": {"0xa"}, "/configmaps": {"0xb"}}, true},
		{"equal counts leave both",
			[]api.Watcher{typed(10, 1, "0xa"), typed(20, 1, "0xb")},
			[]apf.Request{req("pods"), req("configmaps")},
			map[string][]string{"/pods": {"0xa", "0xb"}, "/configmaps": {"0xa", "0xb"}}, true},
		{"a spare request may go to no watcher",
			[]api.Watcher{typed(10, 1, "0xa")},
			[]apf.Request{req("pods"), req("configmaps")},
			map[string][]string{"/pods": {"?", "0xa"}, "/configmaps": {"?", "0xa"}}, true},
		{"fewer requests than watchers: types unused",
			[]api.Watcher{typed(10, 1, "0xa"), typed(20, 1, "0xb")},
			[]apf.Request{req("pods")},
			map[string][]string{"/pods": {"?", "0xa", "0xb"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMatcher(matchInput{watchers: tt.ws, reqs: tt.reqs, at: at, details: true}, true)
			if diff := cmp.Diff(tt.want, allowedByName(m)); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			if m.typesUsed != tt.typesUsed {
				t.Errorf("types used = %v, want %v", m.typesUsed, tt.typesUsed)
			}
			if !m.typesUsed {
				for i, c := range m.wclass {
					if c != wild {
						t.Errorf("types unused, but watcher %d keeps class %d", i, c)
					}
				}
			}
		})
	}
}

// Past classSearchBudget steps the search gives up and the types are not
// used: never a partial answer.
func TestInferClassesBudget(t *testing.T) {
	var ws []api.Watcher
	var reqs []apf.Request
	for i := range 14 {
		ws = append(ws, typed(int64(10*(i+1)), 1, []string{"0xa", "0xb", "0xc", "0xd"}[i%4]))
		reqs = append(reqs, resourceRequest("u", string(rune('a'+i)), t0))
	}
	// The same shape, smaller, is searched to the end.
	small := newMatcher(matchInput{watchers: ws[:8], reqs: reqs[:8], at: t0.Add(time.Hour), details: true}, true)
	if !small.typesUsed {
		t.Fatalf("8 resources over 4 types: types not used")
	}
	m := newMatcher(matchInput{watchers: ws, reqs: reqs, at: t0.Add(time.Hour), details: true}, true)
	if m.typesUsed {
		t.Fatalf("14 resources of one request over 4 types searched within the budget: make the instance harder")
	}
	for r, cs := range m.allowed {
		if len(cs) != len(m.classes)+1 {
			t.Errorf("resource %s: allowed %v, want every class", m.resources[r], cs)
		}
	}
}
