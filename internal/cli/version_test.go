package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVersionFormsAgree: the one line, --version and -o json say the same version,
// commit, Go version and platform; -o of another format is refused.
func TestVersionFormsAgree(t *testing.T) {
	want := currentVersion()
	if want.Version == "" || want.Commit == "" || want.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Fatalf("currentVersion() = %+v: a field is empty or the platform wrong", want)
	}
	line := versionLine(want) + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if code, out, errOut := run(t, nil, args...); code != ExitOK || out != line {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", args, code, out, errOut, line)
		}
	}
	code, out, errOut := run(t, nil, "version", "-o", "json")
	var got VersionInfo
	if code != ExitOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("version -o json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("version -o json (-want +got):\n%s", diff)
	}
	if code, _, errOut := run(t, nil, "version", "-o", "xml"); code != ExitError || !strings.Contains(errOut, `unsupported --output "xml"`) {
		t.Errorf("version -o xml: exit %d, stderr %q", code, errOut)
	}
}

// TestVersion: the values stamped at link time (make build) are the ones
// printed.
func TestVersion(t *testing.T) {
	version, commit = "v9.9.9", "0123abc"
	t.Cleanup(func() { version, commit = "", "" })
	code, out, _ := run(t, nil, "version", "-o", "json")
	var v VersionInfo
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil || v.Version != "v9.9.9" || v.Commit != "0123abc" || !strings.HasPrefix(v.GoVersion, "go") {
		t.Errorf("version -o json: exit %d, %q", code, out)
	}
	code, out, _ = run(t, nil, "--version")
	if code != ExitOK || !strings.HasPrefix(out, "kubectl-watch_doctor v9.9.9 (commit 0123abc, go") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}
