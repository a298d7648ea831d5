package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// envPluginBin names the built kubectl-watch_doctor binary the plugin tests
// run (the Makefile's e2e target sets it).
const envPluginBin = "WATCH_DOCTOR_BIN"

// pluginResult is what one run of the plugin produced.
type pluginResult struct {
	Stdout, Stderr string
	ExitCode       int
}

// runPlugin runs $WATCH_DOCTOR_BIN with args as user against c (KUBECONFIG
// points at user's kubeconfig), bounded by two minutes. A test that calls it
// fails when $WATCH_DOCTOR_BIN is unset or the binary cannot be started; a
// non-zero exit is reported in ExitCode, not as a failure.
//
// Typical use, next to the reproduction the suite keeps running:
//
//	r := sharedRepro(t)
//	res := runPlugin(t, r.cluster, cluster.UserWatchDoctor, "--output", "json")
func runPlugin(t *testing.T, c *cluster.Cluster, user string, args ...string) pluginResult {
	t.Helper()
	return runPluginWith(t, pluginRun{kubeconfig: c.Kubeconfig(user), user: user}, args...)
}

// pluginRun says how runPluginWith runs the plugin.
type pluginRun struct {
	// kubeconfig is the file KUBECONFIG names; user is for the log.
	kubeconfig, user string
	// in, when set, runs the plugin inside that client network.
	in *cluster.ClientNetwork
	// onStderr, when set, sees each line of stderr as it is written.
	onStderr func(line string)
}

// runPluginWith is runPlugin with a kubeconfig of the caller's choice, in
// a client network, or watching stderr as it comes.
func runPluginWith(t *testing.T, run pluginRun, args ...string) pluginResult {
	t.Helper()
	bin := pluginBin(t)
	res, err := execPlugin(bin, run, args...)
	if err != nil {
		t.Fatalf("run %s %q: %v\nstderr:\n%s", bin, args, err, res.Stderr)
	}
	t.Logf("%s %q as %q: exit %d", bin, args, run.user, res.ExitCode)
	return res
}

// pluginBin is $WATCH_DOCTOR_BIN; the test fails when it is unset.
func pluginBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(envPluginBin)
	if bin == "" {
		t.Fatalf("$%s is not set: build the plugin (make build) and export %s=/path/to/kubectl-watch_doctor, or run `make e2e`",
			envPluginBin, envPluginBin)
	}
	return bin
}

// execPlugin is runPluginWith's run of bin, which any goroutine may call:
// an error only when the plugin could not be run.
func execPlugin(bin string, run pluginRun, args ...string) (pluginResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if run.in != nil {
		in := run.in.Command(bin, args...)
		cmd = exec.CommandContext(ctx, in.Path, in.Args[1:]...)
	}
	cmd.Env = append(os.Environ(), "KUBECONFIG="+run.kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if run.onStderr != nil {
		cmd.Stderr = &lineWriter{buf: &stderr, onLine: run.onStderr}
	}
	err := cmd.Run()
	res := pluginResult{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return res, err
	}
	return res, nil
}

// runPluginsAtOnce runs the plugin once per element of runs, all at once
// (samplers of the same span), and returns their results in order; a
// test fails as with runPlugin.
func runPluginsAtOnce(t *testing.T, runs []pluginRun, args [][]string) []pluginResult {
	t.Helper()
	bin := pluginBin(t)
	out, errs := make([]pluginResult, len(runs)), make([]error, len(runs))
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = execPlugin(bin, runs[i], args[i]...)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %s %q: %v\nstderr:\n%s", bin, args[i], err, out[i].Stderr)
		}
		t.Logf("%s %q as %q: exit %d", bin, args[i], runs[i].user, out[i].ExitCode)
	}
	return out
}

// lineWriter keeps what is written and calls onLine for each complete line.
// exec.Cmd writes to it from one goroutine.
type lineWriter struct {
	buf     *bytes.Buffer
	pending []byte
	onLine  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.onLine(string(w.pending[:i]))
		w.pending = w.pending[i+1:]
	}
}
