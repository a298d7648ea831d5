package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// The releases whose cacher the upstream column can run. The in-process
// one is the k8s.io/apiserver the main module requires (v0.37.2); each
// other has a module of its own (hack/replay/<release>) built into a
// program the replay runs as a subprocess (docs/architecture.md, "The
// 1.38 replay column").
const (
	upstreamReleaseInProcess = replay.ReleaseV137
	upstreamReleaseV138      = replay.ReleaseV138
)

// upstreamReleasePrograms names each subprocess release's program, looked
// for beside this executable, then on PATH.
var upstreamReleasePrograms = map[string]string{
	upstreamReleaseV138: "kubectl-watch_doctor-replay-v1.38",
}

// upstreamReleases lists the values of --upstream-release.
func upstreamReleases() []string {
	return []string{upstreamReleaseInProcess, upstreamReleaseV138}
}

// validateUpstreamRelease checks --upstream-release.
func validateUpstreamRelease(rel string) error {
	if rel == upstreamReleaseInProcess || upstreamReleasePrograms[rel] != "" {
		return nil
	}
	return fmt.Errorf("unsupported --upstream-release %q: use one of %s", rel, strings.Join(upstreamReleases(), ", "))
}

// resolveRelease makes --upstream-release and the scenario's release one:
// a replay models one release, in every column. Without the flag the
// scenario's release decides (v1.37 unless it says release: v1.38); the
// flag names the release of a scenario that names none, and must agree
// with one that does.
func (o *ReplayOptions) resolveRelease() error {
	switch {
	case o.UpstreamRelease == "":
		o.UpstreamRelease = o.scenario.ModelRelease()
		o.releaseFromScenario = true
	case o.scenario.Release == "":
		if err := validateUpstreamRelease(o.UpstreamRelease); err != nil {
			return err
		}
		o.scenario.Release = o.UpstreamRelease
	case o.scenario.Release != o.UpstreamRelease:
		return fmt.Errorf("--upstream-release %s contradicts scenario %q, which models %s (release: %s): drop the flag, or change the scenario's release", o.UpstreamRelease, o.scenario.Name, o.scenario.Release, o.scenario.Release)
	}
	return nil
}

// upstreamProgram finds the program that runs release's upstream column:
// $WATCH_DOCTOR_REPLAY_V1_38 style override first, then beside this
// executable, then on PATH.
func upstreamProgram(release string) (string, error) {
	name := upstreamReleasePrograms[release]
	env := "WATCH_DOCTOR_REPLAY_" + strings.NewReplacer("v", "V", ".", "_").Replace(release)
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("--upstream-release %s runs %s, found neither in $%s, beside this executable nor on PATH: build it with `make replay-%s` (Go 1.27, fetched by the go command: GOTOOLCHAIN=go1.27.3) and put bin/%s beside kubectl-watch_doctor, or drop the upstream column (--columns unpatched,pr141899,complete)",
		release, name, env, release, name)
}

// maxUpstreamOutput bounds the subprocess's Replay document (the largest
// built-in scenario's upstream column with a timeline is under 1 MiB).
const maxUpstreamOutput = 64 << 20

// runUpstreamRelease replays sc's upstream column on release's cacher in
// its subprocess, prog: the scenario goes to its stdin in the --print-scenario
// form, the Replay document comes back on its stdout; its progress goes
// to progress.
func runUpstreamRelease(ctx context.Context, release, prog string, sc *replay.Scenario, timeline bool, progress io.Writer) (*api.Replay, error) {
	in, err := sc.Marshal()
	if err != nil {
		return nil, err
	}
	var args []string
	if timeline {
		args = append(args, "-timeline")
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, left: maxUpstreamOutput}
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the %s upstream column (%s): %w", release, prog, err)
	}
	var res api.Replay
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("the %s upstream column (%s) wrote no Replay document: %w", release, prog, err)
	}
	if len(res.Columns) != 1 || res.Columns[0].Name != api.ColumnUpstream || res.Columns[0].Release == "" {
		return nil, fmt.Errorf("the %s upstream column (%s) wrote %d columns, want one upstream column with its release", release, prog, len(res.Columns))
	}
	return &res, nil
}

// limitedWriter fails a write past its bound instead of cutting silently.
type limitedWriter struct {
	w    io.Writer
	left int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, fmt.Errorf("output over %d bytes", maxUpstreamOutput)
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}
