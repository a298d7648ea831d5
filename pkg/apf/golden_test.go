package apf

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// The golden tests read the APF dumps of the real kube-apiserver v1.37.2
// captures and compare the parsed rows with testdata/golden/. Rewrite with
//
//	go test ./pkg/apf -run Golden -update

var captures = []string{"t1", "t2"}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func goldenPath(capture, name string) string {
	return capture + "-" + strings.TrimSuffix(name, ".txt") + ".json"
}

func openFixture(t *testing.T, capture, name string) *os.File {
	t.Helper()
	f, err := os.Open(golden.Fixture(capture, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestGoldenRequests(t *testing.T) {
	for _, c := range captures {
		t.Run(c, func(t *testing.T) {
			got, err := ParseRequests(openFixture(t, c, "apf-requests.txt"))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, goldenPath(c, "apf-requests.txt"), marshal(t, got))

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
			levels, skipped, err := ParsePriorityLevels(openFixture(t, c, "apf-priority-levels.txt"))
			if err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, goldenPath(c, "apf-priority-levels.txt"), marshal(t, summary{levels, skipped.First}))
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
