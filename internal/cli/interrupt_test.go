package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/dumpgen"
	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// TestInterruptExits130: Ctrl-C stops cleanly with exit 130 and says so, without
// "context canceled".
func TestInterruptExits130(t *testing.T) {
	s := fakeapiserver.Start(t, golden.Fixture("t2"))
	s.Block = true
	kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
	interruptAtOnce(t)
	code, _, errOut := runLive(t, "diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--samples", "1")
	if code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
	if strings.Contains(errOut, "context canceled") || !strings.Contains(errOut, "interrupted") {
		t.Errorf("stderr %q", errOut)
	}
}

// interruptAtOnce makes the next command see Ctrl-C as soon as it listens.
// It replaces the package's signal relay: a test that calls it must not be
// parallel, or every command running beside it is interrupted too.
func interruptAtOnce(t *testing.T) {
	t.Helper()
	replaceSignalRelay(t)
	restore := notifySignals
	notifySignals = func(c chan<- os.Signal) { c <- os.Interrupt }
	t.Cleanup(func() { notifySignals = restore })
}

// replaceSignalRelay marks t as a test that replaces notifySignals:
// t.Setenv makes the testing package panic if t is, or later becomes,
// parallel, so no such test can run beside another command.
func replaceSignalRelay(t *testing.T) {
	t.Helper()
	t.Setenv("WATCH_DOCTOR_TEST_SIGNAL_RELAY", t.Name())
}

// Ctrl-C stops analyze too, in the diagnosis and not only in fetches: on
// the APF-only storm (50,000 rows in each of two captures, no goroutine
// dump) it exits 130 and prints no report.
func TestInterruptAnalyzeAPFOnly(t *testing.T) {
	dirs, err := dumpgen.WriteAPFOnlyCaptures(t.TempDir(), 50_000)
	if err != nil {
		t.Fatal(err)
	}
	interruptAtOnce(t)
	code, out, errOut := run(t, nil, append(append([]string{"analyze"}, dirs...), "-o", "json")...)
	if code != ExitInterrupted || out != "" || !strings.Contains(errOut, "interrupted") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want %d, no report, and interrupted said", code, len(out), errOut, ExitInterrupted)
	}
}

// signalledMainEnv runs the test binary as the plugin (TestMain):
// signalledMain with its arguments.
const signalledMainEnv = "WATCH_DOCTOR_TEST_SIGNALLED_MAIN"

// listeningLine is what signalledMain prints on stderr once the command
// listens for SIGINT and SIGTERM.
const listeningLine = "test: listening for signals"

// signalledMain is Main as the plugin runs it, with one change: once the
// command listens for SIGINT and SIGTERM, it says so on stderr and waits
// for the signal before going on, so the test's SIGTERM arrives, by
// event, before the analysis: the command must then stop at its first
// check.
func signalledMain(args []string) int {
	notifySignals = func(c chan<- os.Signal) {
		got := make(chan os.Signal, 1)
		signal.Notify(got, os.Interrupt, syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, listeningLine)
		c <- <-got
	}
	return Main(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, args)
}

// A SIGTERM to a running `analyze` process on a large APF-only input
// (the storm of TestInterruptAnalyzeAPFOnly) ends it with exit 130,
// stderr saying so, and no report on stdout.
func TestInterruptAnalyzeSIGTERM(t *testing.T) {
	dirs, err := dumpgen.WriteAPFOnlyCaptures(t.TempDir(), 50_000)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append(append([]string{"analyze"}, dirs...), "-o", "json")...)
	cmd.Env = append(os.Environ(), signalledMainEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	signalled := false
	var errLines []string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if sc.Text() == listeningLine && !signalled {
			signalled = true
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			continue
		}
		errLines = append(errLines, sc.Text())
	}
	_ = cmd.Wait() // the exit code is checked below
	if !signalled {
		t.Fatalf("analyze never listened for signals: exit %d, stderr %q", cmd.ProcessState.ExitCode(), errLines)
	}
	errText := strings.Join(errLines, "\n")
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted || out.Len() != 0 || !strings.Contains(errText, "interrupted (terminated)") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q; want %d, no report, and the signal named", code, out.Len(), errText, ExitInterrupted)
	}
}
