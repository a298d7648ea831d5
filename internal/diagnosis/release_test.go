package diagnosis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestReleaseStep(t *testing.T) {
	const unknown = "kube-apiserver v1.39.0 is newer than v1.38.0-beta.0, the newest release whose watcher frames this build knows and was proven on: its goroutines were read with v1.38.0-beta.0's frames, and a watcher loop changed since would not be recognised"
	for _, tc := range []struct {
		name string
		info api.APIServer
		want added
	}{
		{"proven", api.APIServer{Name: "a", Version: "v1.37.2", DumpFormat: "debug=2", Watchers: 38}, added{}},
		{"no version", api.APIServer{Name: "a", DumpFormat: "debug=2"}, added{}},
		{"proven, v1.38", api.APIServer{Name: "a", Version: "v1.38.0-beta.0", DumpFormat: "debug=2", Watchers: 38, InitialPhase: 2}, added{}},
		{"unknown, debug=1", api.APIServer{Name: "a", Version: "v1.39.0", DumpFormat: "debug=1", Watchers: 0},
			added{
				notes:      []string{unknown + "; recognised 0 cacheWatcher goroutines, 0 in the initial phase, in the debug=1 evidence"},
				incomplete: []string{`a: kube-apiserver v1.39.0 is newer than any release this build knows the watcher frames of: "no watch stuck" is not proven for it (recognised 0 cacheWatcher goroutines, 0 in the initial phase, in the debug=1 evidence)`},
			}},
		{"unknown, nothing read", api.APIServer{Name: "a", Version: "v1.39.0"},
			added{
				notes:      []string{unknown + "; no goroutine dump or trace was read"},
				incomplete: []string{`a: kube-apiserver v1.39.0 is newer than any release this build knows the watcher frames of: "no watch stuck" is not proven for it (no goroutine dump or trace was read)`},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, releaseStep(tc.info), cmp.AllowUnexported(added{})); d != "" {
				t.Errorf("releaseStep (-want +got):\n%s", d)
			}
		})
	}
}
