package harm

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestCheapLookSeesV138Watchers: the cheap look's profile check on the
// seed capture's debug=1 profile, as captured (v1.37.2) and with its
// watchers in the v1.38 shape (dumpgen.Debug1To138, derived): both see
// the two initial-phase watchers blocked sending, so neither answers
// "no watcher blocked sending" and skips the debug=2 dump.
func TestCheapLookSeesV138Watchers(t *testing.T) {
	b, err := os.ReadFile(golden.Fixture("t2", "goroutine-debug1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	derived, err := dumpgen.Debug1To138(b)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{"v1.37.2": b, "v1.38 (derived)": derived} {
		t.Run(name, func(t *testing.T) {
			profile, d, err := watches.ReadProfile(bytes.NewReader(in), watches.FormatDebug1)
			if err != nil {
				t.Fatal(err)
			}
			look := CheapLook{Profile: profile, Phases: d.PhaseCounts, At: time.Date(2026, 11, 29, 10, 22, 23, 0, time.UTC)}
			if got := look.InitialInSend(); got != 2 {
				t.Errorf("InitialInSend = %d, want 2", got)
			}
			if got := CheapAnswer(look); got != "" {
				t.Errorf("cheapAnswer = %q, want no answer (the dump decides)", got)
			}
		})
	}
	if got := (CheapLook{Phases: []api.PhaseCount{{Phase: api.PhaseInitial, InSend: true, Count: 2}}}).InitialInSend(); got != 0 {
		t.Errorf("InitialInSend without a profile = %d, want 0", got)
	}
}
