package apf

import (
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// The golden tests read the APF dumps of the real kube-apiserver v1.37.2
// captures and compare the parsed rows with testdata/golden/. Rewrite with
//
//	go test ./pkg/apf -run Golden -update

var captures = []string{"t1", "t2"}

func TestGoldenRequests(t *testing.T) {
	for _, c := range captures {
		t.Run(c, func(t *testing.T) {
			got, err := ParseRequests(golden.Open(t, c, "apf-requests.txt"))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, golden.FixtureName(c, "apf-requests.txt"), golden.JSON(t, got))

			// The ground truth of the capture (fixtures README): both
			// initial-phase watches execute in global-default, one seat each.
			var watches []string
			for _, r := range got.Requests {
				if r.Executing() && r.Verb == "watch" {
					watches = append(watches, r.User+" "+r.PriorityLevel+" "+r.Path)
					if r.Seats() != 1 {
						t.Errorf("%s holds %d seats, want 1", r.User, r.Seats())
					}
				}
			}
			want := []string{
				"slow-informer global-default /api/v1/namespaces/rand2/pods",
				"paced-reader global-default /api/v1/namespaces/rand2/pods",
			}
			if strings.Join(watches, "\n") != strings.Join(want, "\n") || !got.HasDetails || len(got.Skipped) != 0 {
				t.Errorf("executing watches %q (details %v, skipped %v), want %q", watches, got.HasDetails, got.Skipped, want)
			}
		})
	}
}

func TestGoldenPriorityLevels(t *testing.T) {
	type summary struct {
		Levels  []PriorityLevel `json:"levels"`
		Skipped []Skipped       `json:"skipped,omitempty"`
	}
	for _, c := range captures {
		t.Run(c, func(t *testing.T) {
			levels, skipped, err := ParsePriorityLevels(golden.Open(t, c, "apf-priority-levels.txt"))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, golden.FixtureName(c, "apf-priority-levels.txt"), golden.JSON(t, summary{levels, skipped.First}))
			if len(levels) != 8 || skipped.Count != 0 {
				t.Errorf("%d levels, skipped %v; want 8 and none", len(levels), skipped)
			}
			for _, l := range levels {
				if l.Name == "global-default" && l.ExecutingRequests != 2 {
					t.Errorf("global-default executes %d requests, want the 2 initial-phase watches", l.ExecutingRequests)
				}
			}
		})
	}
}
