package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// TestVersionContradictionIsWarned: /version saying v1.20.0 while
// kubernetes_build_info and the frames say v1.37 gives a note.
func TestVersionContradictionIsWarned(t *testing.T) {
	t.Parallel()
	dir := fakeapiserver.CopyCapture(t, golden.Fixture("t2"), "2026-11-29T10:23:09Z")
	if err := os.WriteFile(filepath.Join(dir, "version.json"), []byte(`{"major":"1","minor":"20","gitVersion":"v1.20.0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := fakeapiserver.Start(t, dir)
	res, err := Run(context.Background(), hostileConfig(t, s), NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	want := "the versions contradict each other: /version says v1.20.0, but kubernetes_build_info says v1.37.2 and the goroutine profile's k8s.io/apiserver module says v1.37"
	if notes := strings.Join(res.Instances[0].Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	// The real capture agrees with itself.
	res, err = Run(context.Background(), hostileConfig(t, fakeapiserver.Start(t, golden.Fixture("t2"))), NewCaptures())
	if err != nil || len(res.Instances[0].Notes) != 0 {
		t.Errorf("t2: %v, notes %q", err, res.Instances[0].Notes)
	}
}

func TestVersionContradiction(t *testing.T) {
	t.Parallel()
	frames := func(file string) *stacks.Aggregated {
		return &stacks.Aggregated{Stacks: []stacks.Stack{{Frames: []stacks.Frame{{File: "/go/src/runtime/proc.go"}, {File: file}}}}}
	}
	const v137 = "/root/go/pkg/mod/k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go"
	for _, tc := range []struct {
		name, version, buildInfo string
		profile                  *stacks.Aggregated
		want                     string
	}{
		{name: "agree", version: "v1.37.2", buildInfo: "v1.37.0", profile: frames(v137)},
		{name: "one witness", version: "v1.20.0"},
		{name: "unparsable build info", version: "v1.20.0", buildInfo: "garbage"},
		{name: "vendored frames", version: "v1.20.0", profile: frames("/src/k8s.io/apiserver/pkg/server/handler.go")},
		{name: "build info contradicts", version: "v1.20.0", buildInfo: "v1.37.2",
			want: "the versions contradict each other: /version says v1.20.0, but kubernetes_build_info says v1.37.2; the report goes by /version, so check which server answered (a proxy or a second server behind the address?)"},
		{name: "both contradict", version: "v1.20.0", buildInfo: "v1.37.2", profile: frames(v137),
			want: "the versions contradict each other: /version says v1.20.0, but kubernetes_build_info says v1.37.2 and the goroutine profile's k8s.io/apiserver module says v1.37; the report goes by /version, so check which server answered (a proxy or a second server behind the address?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, versionContradiction(tc.version, tc.buildInfo, tc.profile)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
