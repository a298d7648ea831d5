package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// fakeUpstreamEnv makes this test binary act as a release's upstream
// program (hack/replay/v1.38's main): the real one needs Go 1.27 and is
// tested by make test-replay-v1.38; this one replays the scenario on stdin
// with our unpatched model under the upstream column's name, so the
// subprocess's plumbing is tested here without it.
const fakeUpstreamEnv = "WATCH_DOCTOR_TEST_FAKE_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(signalledMainEnv) != "" {
		os.Exit(signalledMain(os.Args[1:]))
	}
	if os.Getenv(fakeUpstreamEnv) != "" {
		if err := fakeUpstream(len(os.Args) > 1 && os.Args[1] == "-timeline"); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeUpstream(timeline bool) error {
	sc, err := replay.Parse(os.Stdin)
	if err != nil {
		return err
	}
	res, err := replay.Run(context.Background(), sc, []replay.Backend{replay.NewOurs(api.ColumnUpstream, 0)}, replay.Options{Timeline: timeline})
	if err != nil {
		return err
	}
	res.Columns[0].Release = "v0.38.0-fake"
	return json.NewEncoder(os.Stdout).Encode(res)
}

func TestReplayUpstreamReleaseSubprocess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("WATCH_DOCTOR_REPLAY_V1_38", self)
	t.Setenv(fakeUpstreamEnv, "1")
	file := filepath.Join(t.TempDir(), "small.yaml")
	if err := os.WriteFile(file, []byte(smallScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, timeline := range []bool{false, true} {
		t.Run(fmt.Sprintf("timeline=%v", timeline), func(t *testing.T) {
			args := []string{file, "--upstream-release", "v1.38", "-o", "json"}
			if timeline {
				args = append(args, "--timeline")
			}
			stdout, stderr, code := runReplay(t, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			var res api.Replay
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range res.Columns {
				got = append(got, c.Name+"@"+c.Release)
			}
			// One release per replay: our columns model 1.38's loop.
			want := []string{"upstream@v0.38.0-fake", "unpatched@v1.38", "pr141899@v1.38", "complete@v1.38"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
			if res.Verdict.Fidelity != "identical" {
				t.Errorf("fidelity %q, want identical (the fake runs the unpatched model)", res.Verdict.Fidelity)
			}
			if timeline && (res.Timeline == nil || len(res.Timeline.Series) != 4 || res.Timeline.Series[0].Column != api.ColumnUpstream) {
				t.Errorf("timeline %+v, want four series, upstream's first", res.Timeline)
			}
		})
	}
}

func TestReplayUpstreamReleaseErrors(t *testing.T) {
	t.Setenv("WATCH_DOCTOR_REPLAY_V1_38", "")
	t.Setenv("PATH", t.TempDir())
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"issue-131721", "--upstream-release", "v1.36"}, `error: unsupported --upstream-release "v1.36": use one of v1.37, v1.38`},
		{[]string{"issue-131721", "--upstream-release", "v1.38", "--columns", "upstream"}, "error: --upstream-release v1.38 runs kubectl-watch_doctor-replay-v1.38, found neither in $WATCH_DOCTOR_REPLAY_V1_38, beside this executable nor on PATH: build it with `make replay-v1.38`"},
		// Without the program, the flag asked for it: no fallback.
		{[]string{"issue-131721", "--upstream-release", "v1.38"}, "error: --upstream-release v1.38 runs kubectl-watch_doctor-replay-v1.38"},
		// A 1.38 scenario whose only column asked for is upstream.
		{[]string{"quiet-and-busy", "--columns", "upstream"}, "error: --upstream-release v1.38 runs kubectl-watch_doctor-replay-v1.38"},
		{[]string{"quiet-and-busy", "--upstream-release", "v1.37"}, `error: --upstream-release v1.37 contradicts scenario "quiet-and-busy", which models v1.38 (release: v1.38): drop the flag, or change the scenario's release`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := runReplay(t, tt.args...)
			if code == 0 || !strings.HasPrefix(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want it to start with %q", code, stderr, tt.want)
			}
		})
	}
}

// TestReplayScenarioRelease: a scenario's release decides the replay's
// without the flag (quiet-and-busy models v1.38): our columns model 1.38's
// loop and say so, and without kubectl-watch_doctor-replay-v1.38 the
// upstream column is left out with a note; the flag names the release of
// a scenario that names none (--print-scenario shows it).
func TestReplayScenarioRelease(t *testing.T) {
	t.Setenv("WATCH_DOCTOR_REPLAY_V1_38", "")
	t.Setenv("PATH", t.TempDir())
	stdout, stderr, code := runReplay(t, "quiet-and-busy", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, `note: scenario "quiet-and-busy" models v1.38: --upstream-release v1.38 runs kubectl-watch_doctor-replay-v1.38`) ||
		!strings.Contains(stderr, "note: replaying it without the upstream column") {
		t.Errorf("stderr does not say why the upstream column is left out:\n%s", stderr)
	}
	var res api.Replay
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range res.Columns {
		got = append(got, c.Name+"@"+c.Release)
	}
	if diff := cmp.Diff([]string{"unpatched@v1.38", "pr141899@v1.38", "complete@v1.38"}, got); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	stdout, stderr, code = runReplay(t, "issue-131721", "--upstream-release", "v1.38", "--print-scenario")
	if code != 0 || !strings.Contains(stdout, "\nrelease: v1.38\n") {
		t.Errorf("--print-scenario with --upstream-release v1.38: exit %d, stderr %s, scenario:\n%s", code, stderr, stdout)
	}
	stdout, _, _ = runReplay(t, "issue-131721", "--print-scenario")
	if strings.Contains(stdout, "release:") {
		t.Errorf("a scenario without a release printed one:\n%s", stdout)
	}
}
