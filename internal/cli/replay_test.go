package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func runReplay(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, append([]string{"replay"}, args...))
	return out.String(), errOut.String(), code
}

const smallScenario = `name: small
duration: 2m
resources:
- name: pods
  objects:
  - {namespace: ns, count: 400, bytes: 20Ki}
clients:
- name: stuck
  model: stops-after 1
  namespace: ns
- name: reader
  model: healthy
  namespace: ns
`

func TestReplayCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "error: no scenario: name a built-in one (client-stacks, half-window-client, issue-131721, issue-137631, quiet-and-busy, slow-but-progressing, slow-client-busy-resource, streaming-stall), a YAML file, or use --from DIR"},
		{[]string{"nope"}, `error: unknown scenario "nope": use one of client-stacks, half-window-client, issue-131721, issue-137631, quiet-and-busy, slow-but-progressing, slow-client-busy-resource, streaming-stall, or a YAML file`},
		{[]string{"issue-131721", "-o", "xml"}, `error: unsupported --output "xml": use one of table, wide, json, yaml`},
		{[]string{"issue-131721", "--columns", "upstream,mine"}, `error: unsupported --columns "mine": use any of upstream, unpatched, pr141899, complete`},
		{[]string{"issue-131721", "--fail-on", "always"}, `error: unsupported --fail-on "always": use one of none, cut, different`},
		{[]string{"issue-131721", "--from", "."}, `error: both a scenario "issue-131721" and --from "." given: use one`},
		{[]string{bad}, `error: scenario file "` + bad + `": scenario "x": no resources`},
		{[]string{"issue-131721", "--transport", "curl"}, `error: invalid --transport: unknown transport profile "curl": use one of go, nghttp2, http1, half-window`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runReplay(t, tt.args...)
			if code != ExitError || stdout != "" {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, ExitError)
			}
			if got := strings.TrimSpace(stderr); !strings.HasPrefix(got, tt.want) {
				t.Errorf("stderr:\n%s\nwant it to start with:\n%s", got, tt.want)
			}
		})
	}
}

// TestReplayTransportFlag: --transport gives every client without a
// transport of its own the profile's model; with nghttp2 the paced reader
// of issue-131721 (2.5 events/s of 20 KiB) waits 31 s between two sends
// and the stall timeout cuts it, where on client-go's model it completes.
func TestReplayTransportFlag(t *testing.T) {
	stdout, stderr, code := runReplay(t, "issue-131721", "--transport", "nghttp2", "--columns", "pr141899", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var res struct {
		Transport struct {
			Profile      string `json:"profile"`
			Refresh      string `json:"refresh"`
			RefreshBytes int64  `json:"refreshBytes"`
		} `json:"transport"`
		Columns []struct {
			Clients []struct {
				Name    string `json:"name"`
				Outcome string `json:"outcome"`
			} `json:"clients"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Transport.Profile != "nghttp2" || res.Transport.Refresh != "threshold" || res.Transport.RefreshBytes != 1536<<10 {
		t.Errorf("transport %+v, want the nghttp2 profile's", res.Transport)
	}
	outcomes := map[string]string{}
	for _, c := range res.Columns[0].Clients {
		outcomes[c.Name] = c.Outcome
	}
	if outcomes["paced-reader"] != "stopped" {
		t.Errorf("paced-reader on nghttp2 under pr141899: %q, want stopped (outcomes %v)", outcomes["paced-reader"], outcomes)
	}
}

func TestReplayListAndPrint(t *testing.T) {
	stdout, _, code := runReplay(t, "--list")
	if code != ExitOK || !strings.HasPrefix(stdout, "SCENARIO ") || !strings.Contains(stdout, "issue-131721") {
		t.Errorf("--list: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runReplay(t, "issue-131721", "--print-scenario")
	if code != ExitOK || !strings.Contains(stdout, "name: issue-131721") || !strings.Contains(stdout, "model: stops-after 1") {
		t.Errorf("--print-scenario: exit %d\n%s", code, stdout)
	}
}

// TestReplayOutputChecks: replay checks --svg before running, refuses "-" as a file
// name, and --list honours -o.
func TestReplayOutputChecks(t *testing.T) {
	code, out, errOut := run(t, nil, "replay", "issue-131721", "--svg", "/nonexistent/x.svg")
	if code != ExitError || out != "" || !strings.Contains(errOut, `--svg "/nonexistent/x.svg"`) {
		t.Errorf("--svg into a missing directory: exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chdir(wd) })
	code, out, errOut = run(t, nil, "replay", "slow-but-progressing", "--columns", "patched", "--svg", "-")
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("--svg - wrote a file named \"-\"")
	}
	if code == ExitError && !strings.Contains(errOut, "--svg") {
		t.Errorf("--svg -: exit %d, stderr %q", code, errOut)
	}
	if code != ExitError && !strings.Contains(out, "<svg") {
		t.Errorf("--svg - wrote no SVG to stdout (exit %d)", code)
	}
	code, out, errOut = run(t, nil, "replay", "--list", "-o", "json")
	var list []map[string]any
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) == 0 || list[0]["name"] == nil {
		t.Errorf("replay --list -o json: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}
