package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// traceFailures are the ways an execution trace can fail to arrive, as
// hostile or broken servers answer it: each must leave the suspects
// undecided rather than stop the world with a debug=2 dump. hangs marks
// the servers that never finish the answer: only these wait for
// --request-timeout, so only these are run with a short one (runs in
// parallel on a busy machine may take longer than that to read /metrics).
var traceFailures = []struct {
	name  string
	hangs bool
	setup func(t *testing.T, s *fakeapiserver.Server)
}{
	{"trace already running", false, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 500, Body: "Could not enable tracing: execution tracer already enabled\n"})},
	{"403", false, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 403, Body: `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","code":403}`})},
	{"404", false, func(t *testing.T, s *fakeapiserver.Server) {}},
	{"500", false, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 500, Body: "internal error"})},
	{"an old Go", false, func(t *testing.T, s *fakeapiserver.Server) {
		s.Trace = true
		s.Hostile["/version"] = &fakeapiserver.Hostility{Kind: fakeapiserver.ErrorBody, Status: 200, Body: `{"gitVersion":"v1.28.0","goVersion":"go1.21.13"}`}
	}},
	{"an unknown trace version", false, func(t *testing.T, s *fakeapiserver.Server) {
		s.TraceBody = append([]byte("go 1.99 trace\x00\x00\x00"), bytes.Repeat([]byte{0x01}, 256)...)
	}},
	{"garbage", false, func(t *testing.T, s *fakeapiserver.Server) {
		s.TraceBody = bytes.Repeat([]byte{0xff, 0x00, 0x7f}, 4096)
	}},
	{"a slowloris", true, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.Stall, Body: "go 1.2"})},
	{"a hang", true, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.Silent})},
	{"HTML", false, hostileTrace(&fakeapiserver.Hostility{Kind: fakeapiserver.HTML})},
	{"a 302", false, func(t *testing.T, s *fakeapiserver.Server) {
		sink := fakeapiserver.StartSink(t)
		s.Hostile["/debug/pprof/trace"] = &fakeapiserver.Hostility{Kind: fakeapiserver.Redirect, Location: sink.URL + "/debug/pprof/trace"}
	}},
	{"a gzip bomb on the probe", false, func(t *testing.T, s *fakeapiserver.Server) {
		s.Hostile["/debug/pprof/trace?seconds=1"] = &fakeapiserver.Hostility{Kind: fakeapiserver.GzipBomb, Chunk: "go 1.26 trace\x00\x00\x00"}
	}},
}

// requestTimeout is --request-timeout of a run against a server that
// hangs or not: a short one where the run waits for it, else one no
// passing run waits for.
func requestTimeout(hangs bool) string {
	if hangs {
		return "1s"
	}
	return "30s"
}

func hostileTrace(h *fakeapiserver.Hostility) func(t *testing.T, s *fakeapiserver.Server) {
	return func(t *testing.T, s *fakeapiserver.Server) { s.Hostile["/debug/pprof/trace"] = h }
}

// harmlessServer is a fake API server whose watch is stuck between t1
// and t2 and which fails the test on any debug=2 dump request.
func harmlessServer(t *testing.T) *fakeapiserver.Server {
	t.Helper()
	s := fakeapiserver.Start(t, golden.Fixture("t1"), golden.Fixture("t2"))
	s.Hostile = map[string]*fakeapiserver.Hostility{}
	s.ForbidDumps(t)
	return s
}

// TestDoNoHarmNoDumpUnlessTheEvidenceAllowsIt: with --evidence trace,
// or a dump over --max-pause, no failure of the trace makes the run take
// the stop-the-world debug=2 dump it was told not to: the suspects stay
// undecided, the run exits 2 and advises --force. The fake server fails
// the test on any debug=2 request.
func TestDoNoHarmNoDumpUnlessTheEvidenceAllowsIt(t *testing.T) {
	t.Parallel()
	for _, ev := range [][]string{{"--evidence", "trace"}, {"--max-pause", "1ms"}} {
		for _, tc := range traceFailures {
			t.Run(strings.Join(ev, "=")+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := harmlessServer(t)
				tc.setup(t, s)
				kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
				args := append([]string{"diagnose", "--kubeconfig", kc, "--apiserver", s.Address(), "--request-timeout", requestTimeout(tc.hangs)}, ev...)
				code, _, errOut := runLive(t, args...)
				if code != ExitError {
					t.Errorf("exit %d, want %d (undecided); stderr:\n%s", code, ExitError, errOut)
				}
				if !strings.Contains(errOut, "--force") {
					t.Errorf("stderr does not advise --force:\n%s", errOut)
				}
			})
		}
	}
}

// TestDoNoHarmInEveryCommandThatFetches: collect, diagnose --contexts
// and diagnose with -o json, all with --evidence trace and a trace that
// fails, request no debug=2 dump.
func TestDoNoHarmInEveryCommandThatFetches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// code is the exit code: collect gathers and decides nothing,
		// so an undecided watch is analyze's to report.
		code int
		args func(t *testing.T, s *fakeapiserver.Server) []string
	}{
		{"collect", ExitOK, func(t *testing.T, s *fakeapiserver.Server) []string {
			return []string{"collect", "--kubeconfig", fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin), "--apiserver", s.Address(), "-d", filepath.Join(t.TempDir(), "b")}
		}},
		{"diagnose -o json", ExitError, func(t *testing.T, s *fakeapiserver.Server) []string {
			return []string{"diagnose", "--kubeconfig", fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin), "--apiserver", s.Address(), "-o", "json"}
		}},
		{"diagnose --contexts", ExitError, func(t *testing.T, s *fakeapiserver.Server) []string {
			kc := writeKubeconfig(t, map[string]string{"a": s.URL})
			return []string{"diagnose", "--kubeconfig", kc, "--contexts", "a"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := harmlessServer(t)
			args := append(tc.args(t, s), "--evidence", "trace", "--request-timeout", requestTimeout(false))
			code, out, errOut := runLive(t, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if !strings.Contains(out+errOut, "--force takes it anyway") {
				t.Errorf("--force is not advised:\n%s\n%s", out, errOut)
			}
		})
	}
}
