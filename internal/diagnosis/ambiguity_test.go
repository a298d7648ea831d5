package diagnosis

import (
	"strings"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/pkg/apf"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The explanation of an ambiguous watcher says what kept it ambiguous,
// and is formatted once for all the watchers that share it.
func TestAmbiguousWhy(t *testing.T) {
	at := t0.Add(time.Hour)
	two := func() matchInput {
		return matchInput{
			watchers: []api.Watcher{initialWatcher(10, 3), initialWatcher(20, 3)},
			reqs:     []apf.Request{watchRequest("a", t0), watchRequest("b", t0)},
			at:       at, details: true,
		}
	}
	tests := []struct {
		name string
		edit func(*matchInput)
		want string
	}{
		{"nothing separates them", func(*matchInput) {},
			"2 executing watch requests could be this watch's: old enough for the watcher's wait (2 watchers and 2 requests may pair among themselves); nothing in the dumps separates them (goroutine ids do not follow arrival order)"},
		{"mixed processes", func(in *matchInput) { in.mixed = "read through a load balancer" },
			"the goroutine dump and the APF dump may come from different API server processes: 2 executing watch requests could be this watch's"},
		{"no details", func(in *matchInput) { in.details = false },
			"the APF dump was taken without includeRequestDetails=1: 2 executing requests could be this watch's"},
		{"one user", func(in *matchInput) { in.reqs[1].User = "a" },
			`; every candidate has user "a", so the user is known exactly`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := two()
			tt.edit(&in)
			res := matchClients(in)
			for i, p := range res.pairs {
				if p.conf != api.MatchAmbiguous || !strings.Contains(p.why, tt.want) {
					t.Errorf("watcher %d: %s: %q, want it to hold %q", i, p.conf, p.why, tt.want)
				}
			}
		})
	}
}

func TestUserOf(t *testing.T) {
	if got := userOf(apf.Request{User: "u", FlowDistinguisher: "f"}); got != "u" {
		t.Errorf("userOf = %q, want the user", got)
	}
	if got := userOf(apf.Request{FlowDistinguisher: "f"}); got != "f" {
		t.Errorf("userOf without a user = %q, want the flow distinguisher", got)
	}
}
