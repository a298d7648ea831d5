package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runMainEnv makes the test binary run main() itself: the tests below
// start it as the plugin, with real stdin, stdout, stderr and exit code.
const runMainEnv = "WATCH_DOCTOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

type outcome struct {
	code           int
	stdout, stderr string
}

func runPlugin(t *testing.T, stdin []byte, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return outcome{code, out.String(), errOut.String()}
}

// TestMainWiresStreamsAndExitCodes: stdout carries the report alone,
// stdin is read for "-", errors go to stderr, and the exit code is the
// command's (0 ok, 1 findings at or above --fail-on, 2 an error).
func TestMainWiresStreamsAndExitCodes(t *testing.T) {
	dump, err := os.ReadFile(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", "t2", "goroutine-debug2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("version", func(t *testing.T) {
		got := runPlugin(t, nil, "version")
		if got.code != 0 || !strings.HasPrefix(got.stdout, "kubectl-watch_doctor ") || got.stderr != "" {
			t.Errorf("version: %+v", got)
		}
	})
	t.Run("stdin to stdout, findings exit 1", func(t *testing.T) {
		got := runPlugin(t, dump, "analyze", "-", "-o", "json")
		var r struct {
			Kind     string `json:"kind"`
			Findings []struct {
				Type string `json:"type"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(got.stdout), &r); err != nil {
			t.Fatalf("stdout is not the JSON report alone: %v\n%.500s", err, got.stdout)
		}
		if got.code != 1 || r.Kind != "Report" || len(r.Findings) == 0 || r.Findings[0].Type != "StuckInitialEvents" {
			t.Errorf("exit %d, kind %q, findings %+v; want 1 and the stuck watches\nstderr: %s", got.code, r.Kind, r.Findings, got.stderr)
		}
	})
	t.Run("fail-on none exits 0", func(t *testing.T) {
		got := runPlugin(t, dump, "analyze", "-", "--fail-on", "none")
		if got.code != 0 || !strings.Contains(got.stdout, "StuckInitialEvents") {
			t.Errorf("exit %d, stdout %.300q", got.code, got.stdout)
		}
	})
	t.Run("error exits 2 on stderr", func(t *testing.T) {
		got := runPlugin(t, nil, "no-such-command")
		if got.code != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, `error: unknown command "no-such-command"`) {
			t.Errorf("unknown command: %+v", got)
		}
	})
	t.Run("bad input names stdin", func(t *testing.T) {
		got := runPlugin(t, []byte("not a dump\n"), "analyze", "-")
		if got.code != 2 || got.stdout != "" || !strings.HasPrefix(got.stderr, `error: <stdin>: unrecognized content: line 1 "not a dump"`) {
			t.Errorf("bad stdin: %+v", got)
		}
	})
}
