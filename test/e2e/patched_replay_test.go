package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// envNewerPatchedBin is the newer release's kube-apiserver built with its
// own stall-fix patches (test/e2e/patches/apiserver-v0.38.0-beta.0: our
// rebase onto 1.38's watcher loop), which test/e2e/run.sh builds with
// hack/build-binaries.sh.
const envNewerPatchedBin = "KUBE_APISERVER_NEWER_PATCHED_BIN"

// patchedReleases are the patched kube-apiservers the suite runs: v1.37.2
// ($KUBE_APISERVER_PATCHED_BIN) and the newer release
// ($KUBE_APISERVER_NEWER_PATCHED_BIN, $E2E_NEWER_KUBE_VERSION).
func patchedReleases(t *testing.T) []release {
	t.Helper()
	old, newer := os.Getenv(envPatchedBin), os.Getenv(envNewerPatchedBin)
	if old == "" || newer == "" {
		t.Fatalf("$%s and $%s must name the patched kube-apiservers: run test/e2e/run.sh, or eval \"$(hack/build-binaries.sh)\" (and KUBE_VERSION=$%s for the newer one) and export them", envPatchedBin, envNewerPatchedBin, envNewerKubeVersion)
	}
	return []release{{"v1.37.2", old}, {newerRelease(t).version, newer}}
}

// patchedStallTimeout is the stall timeout TestPatchedBlockedReplay runs
// the patched servers with: the patches' default, PR 141899's 30 s (the
// server is given no $WATCH_DOCTOR_STALL_TIMEOUT).
const patchedStallTimeout = 30 * time.Second

// TestPatchedBlockedReplay is TestBlockedReplayQuietAndBusy on the patched
// servers of each release, in modes pr141899 and complete, with the stall
// timeout at its default (30 s): one stuck initial replay on a quiet
// resource, one on a busy one, whose watcher the dispatcher terminates
// gracefully first (as unpatched). Measured, on v1.37.2 and on
// v1.38.0-beta.0 (whose patch is our rebase onto process and
// processInitialEvents), and the figures are in docs/versions.md:
//   - pr141899: each watcher goroutine is gone about 30 s after its last
//     send, quiet or busy; its handler stays blocked writing, the request
//     stays executing and APF's goroutine keeps waiting for
//     WatchInitialized (the seat held); the client is told nothing;
//   - complete: the watcher, the handler and the APF wait are gone, the
//     request no longer executing, and the client's transport received
//     RST_STREAM.
//
// Mostly waits (the 30 s timers): it runs beside the other parallel tests
// (TestNewerReleaseDiagnose, TestOlderMinorDiagnose), which mostly wait too.
func TestPatchedBlockedReplay(t *testing.T) {
	t.Parallel()
	for _, rel := range patchedReleases(t) {
		t.Run(rel.version, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{modePR141899, modeComplete} {
				t.Run(mode, func(t *testing.T) {
					t.Parallel()
					opts := cluster.Options{KubeAPIServerBin: rel.bin, APIServerEnv: []string{"WATCH_DOCTOR_STALL_FIX=" + mode}}
					r := measureBlockedReplayWith(t, opts, waitForStalls)
					t.Logf("%s %s: stalls after %v; quiet: %v; busy: %v", rel.version, mode, r.stalls, r.quiet, r.busy)
					checkPatchedBlockedReplay(t, rel.version, mode, r)
				})
			}
		})
	}
}

// checkPatchedBlockedReplay asserts what mode frees and keeps, on the quiet
// and on the busy resource alike.
func checkPatchedBlockedReplay(t *testing.T, version, mode string, r blockedReplayResult) {
	t.Helper()
	want := replayState{WatcherGone: true, HandlerWriting: true, APFWaiting: true, Executing: true}
	if mode == modeComplete {
		want = replayState{WatcherGone: true, StreamEnded: true}
	}
	if r.quiet != want {
		t.Errorf("%s %s, quiet resource: %v\nwant %v", version, mode, r.quiet, want)
	}
	if r.busy != want {
		t.Errorf("%s %s, busy resource: %v\nwant %v", version, mode, r.busy, want)
	}
	for _, ns := range []string{replayQuietNamespace, replayBusyNamespace} {
		// The timer starts at the watcher's last successful send, a
		// moment after its client started.
		if d, ok := r.stalls[ns]; !ok || d < patchedStallTimeout || d > patchedStallTimeout+15*time.Second {
			t.Errorf("%s %s: the %s watcher's stall came %v after its client started (seen %v), want within [%v, %v]", version, mode, ns, d, ok, patchedStallTimeout, patchedStallTimeout+15*time.Second)
		}
	}
	if r.terminated != 1 {
		t.Errorf("%s %s: apiserver_terminated_watchers_total of pods grew by %v, want 1 (the busy watcher, by the dispatcher)", version, mode, r.terminated)
	}
	if len(r.forced) != 1 || !strings.Contains(r.forced[0], `/`+replayBusyNamespace+`/"`) || !strings.HasSuffix(r.forced[0], "graceful = true") {
		t.Errorf("%s %s: the server forced %q, want one graceful close of the busy namespace's watcher", version, mode, r.forced)
	}
}

// waitForStalls waits until the patched server logged its stall line for
// each watch (bounded: the stall timeout and a minute after the last
// watch started), and records when, since each watch's client started.
func waitForStalls(ctx context.Context, c *cluster.Cluster, ws []*replayWatch, r *blockedReplayResult) error {
	_, logPath := c.LogFiles()
	last := ws[len(ws)-1].started
	bound := time.Until(last.Add(patchedStallTimeout + time.Minute))
	var lines map[string]time.Time
	err := wait.PollUntilContextTimeout(ctx, time.Second, bound, true, func(context.Context) (bool, error) {
		var err error
		lines, err = stallLinesByNamespace(logPath, last)
		return len(lines) == len(ws), err
	})
	if err != nil {
		return fmt.Errorf("the patched server logged stalls for %v of the %d watches: %w", lines, len(ws), err)
	}
	r.stalls = map[string]time.Duration{}
	for _, w := range ws {
		r.stalls[w.namespace] = lines[w.namespace].Sub(w.started)
	}
	return nil
}

// stallLineRE matches the patched cacher's stall line, whose watcher
// identifier carries its key (klog header: Lmmdd hh:mm:ss.uuuuuu).
var stallLineRE = regexp.MustCompile(`^W(\d{4} \d{2}:\d{2}:\d{2}\.\d{6}) .*watch-doctor stall fix \(\w+\): watcher key: "[^"]*/pods/([^/"]+)/?"`)

// stallLinesByNamespace returns the time of the first stall line of each
// namespace's watcher in the log at path (the log's clock is this
// machine's, in local time; ref gives the year).
func stallLinesByNamespace(path string, ref time.Time) (map[string]time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		m := stallLineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		at, err := time.ParseInLocation("2006 0102 15:04:05.000000", strconv.Itoa(ref.Year())+" "+m[1], time.Local)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		if _, seen := out[m[2]]; !seen {
			out[m[2]] = at
		}
	}
	return out, sc.Err()
}
