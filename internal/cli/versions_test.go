package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// provenVersions are the kube-apiserver releases whose seed reproduction
// (a stuck reader, a paced reader, a healthy client; two samples) is
// shipped in testdata/kube-apiserver-<version>/seed-repro, captured by
// test/e2e/hack/capture.sh (docs/versions.md).
var provenVersions = []string{"v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2", "v1.38.0-beta.0"}

// seedVerdict is what must not differ between releases: the findings'
// kinds and whom they could name, and the summary's counts.
type seedVerdict struct {
	Exit     int
	Version  string
	Findings []seedFinding
	Stuck    int
	Slow     int
}

type seedFinding struct {
	Type       api.FindingType
	Severity   api.Severity
	Phase      api.Phase
	User       string
	Match      api.Match
	Candidates []string
}

func seedVerdicts(t *testing.T, args ...string) seedVerdict {
	t.Helper()
	code, out, errOut := run(t, nil, append([]string{"analyze", "-o", "json"}, args...)...)
	var r api.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("analyze %v: %v; stderr: %s", args, err, errOut)
	}
	v := seedVerdict{Exit: code, Stuck: r.Summary.StuckWatches, Slow: r.Summary.SlowWatches}
	for _, a := range r.APIServers {
		v.Version = a.Version
	}
	for _, f := range r.Findings {
		sf := seedFinding{Type: f.Type, Severity: f.Severity, Phase: f.Phase, Candidates: f.CandidateUsers()}
		slices.Sort(sf.Candidates)
		if f.Client != nil {
			sf.User, sf.Match = f.Client.User, f.Client.Match
		}
		v.Findings = append(v.Findings, sf)
	}
	return v
}

// TestSeedReproAcrossVersions diagnoses the seed reproduction of every
// proven release as v1.37.2's: slow-informer's watch stuck in its replay,
// paced-reader's slow but progressing, healthy-client not named; from both
// samples and from t2 alone.
func TestSeedReproAcrossVersions(t *testing.T) {
	t.Parallel()
	seed := func(version string, parts ...string) string {
		return filepath.Join(append([]string{"..", "..", "testdata", "kube-apiserver-" + version, "seed-repro"}, parts...)...)
	}
	for _, sc := range []struct {
		name string
		args func(version string) []string
	}{
		{"t1+t2", func(v string) []string { return []string{seed(v, "t1"), seed(v, "t2")} }},
		{"t2", func(v string) []string { return []string{seed(v, "t2")} }},
	} {
		ref := seedVerdicts(t, sc.args("v1.37.2")...)
		// The reference itself: one stuck, one slow, no other finding.
		if ref.Stuck != 1 || ref.Slow != 1 || len(ref.Findings) != 2 || ref.Exit != ExitFindings {
			t.Fatalf("%s: v1.37.2 reference verdicts changed: %+v", sc.name, ref)
		}
		for _, v := range provenVersions {
			t.Run(v+"/"+sc.name, func(t *testing.T) {
				got := seedVerdicts(t, sc.args(v)...)
				want := ref
				want.Version = v
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("verdicts differ from v1.37.2's (-want +got):\n%s", d)
				}
			})
		}
	}
}
