package exporter

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/watch-doctor/watch-doctor/internal/golden"
)

var deployDir = filepath.Join("..", "..", "deploy")

// prometheusRule is the PrometheusRule of deploy/monitoring: the groups
// of deploy/prometheus/rules.yaml, comments and all, under spec.
func prometheusRule(rules []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`# Generated from deploy/prometheus/rules.yaml by TestPrometheusRuleMatchesRulesFile
# (go test ./internal/exporter -run PrometheusRule -update): edit rules.yaml.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: watch-doctor
  labels:
    app.kubernetes.io/name: watch-doctor
    prometheus: k8s
    role: alert-rules
spec:
`)
	_, body, _ := bytes.Cut(rules, []byte("\ngroups:"))
	for _, line := range strings.Split("groups:"+string(body), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestPrometheusRuleMatchesRulesFile(t *testing.T) {
	t.Parallel()
	rules, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got := prometheusRule(rules)
	golden.AssertFile(t, filepath.Join(deployDir, "monitoring", "prometheusrule.yaml"), got)
	// The same rules, parsed.
	var file, cr struct {
		Groups any `json:"groups"`
		Spec   struct {
			Groups any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(rules, &file); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(got, &cr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(file.Groups, cr.Spec.Groups); diff != "" || file.Groups == nil {
		t.Errorf("PrometheusRule groups differ from rules.yaml (-want +got):\n%s", diff)
	}
}

// exportedNames are the metric names serve's registry exports: ours, and
// the Go runtime's and the process's collectors.
func exportedNames(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for _, d := range allDescs {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %s", d)
		}
		names = append(names, m[1])
	}
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	fams, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		names = append(names, f.GetName())
		switch f.GetType().String() {
		case "HISTOGRAM":
			names = append(names, f.GetName()+"_bucket", f.GetName()+"_sum", f.GetName()+"_count")
		case "SUMMARY":
			names = append(names, f.GetName()+"_sum", f.GetName()+"_count")
		}
	}
	return names
}

var (
	promString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promBraces = regexp.MustCompile(`\{[^{}]*\}|\[[^\[\]]*\]`)
	promGroups = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promVar    = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)
	promNumber = regexp.MustCompile(`\b[0-9][0-9A-Za-z_.]*`)
	promIdent  = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*\s*\(?`)
)

var promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}

// metricNames are the metric names a PromQL expression selects: a careful
// tokenizer (the prometheus parser would pull the server into go.mod):
// strings, label matchers, ranges, grouping lists, Grafana variables and
// numbers dropped, then every identifier not called as a function.
func metricNames(expr string) []string {
	s := promString.ReplaceAllString(expr, `""`)
	s = promVar.ReplaceAllString(s, "")
	for prev := ""; prev != s; {
		prev = s
		s = promBraces.ReplaceAllString(s, " ")
	}
	s = promGroups.ReplaceAllString(s, " ")
	s = promNumber.ReplaceAllString(s, " ")
	var out []string
	for _, tok := range promIdent.FindAllString(s, -1) {
		if strings.HasSuffix(tok, "(") {
			continue
		}
		tok = strings.TrimSpace(tok)
		if slices.Contains(promKeywords, strings.ToLower(tok)) {
			continue
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`a_total`, []string{"a_total"}},
		{`sum by (apiserver, job) (rate(a_total{kind="x,y(z)"}[5m])) / on (apiserver) group_left(kind) b > 0.8`, []string{"a_total", "b"}},
		{`time() - max(c{job=~"$job"}) > 3e2 offset 5m`, []string{"c"}},
		{`topk(10, d{apiserver=~"$apiserver"})[$__rate_interval:]`, []string{"d"}},
		{`max by (apiserver) (e) unless ignoring (kind) f == bool 1`, []string{"e", "f"}},
	} {
		if diff := cmp.Diff(tc.want, metricNames(tc.expr)); diff != "" {
			t.Errorf("metricNames(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

func TestDashboardNamesOnlyExportedMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(deployDir, "grafana", "watch-doctor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("deploy/grafana/watch-doctor.json: %v", err)
	}
	if dash.UID == "" || len(dash.Panels) == 0 {
		t.Fatalf("dashboard %q has no uid or no panels", dash.Title)
	}
	exported := exportedNames(t)
	check := func(where, expr string) {
		names := metricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric in %q", where, expr)
		}
		for _, n := range names {
			if !slices.Contains(exported, n) {
				t.Errorf("%s: %q is not exported by serve (in %q)", where, n, expr)
			}
		}
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if inner, ok := strings.CutPrefix(v.Definition, "label_values("); ok {
			metric, _, _ := strings.Cut(inner, ",")
			check("variable "+v.Name, metric)
		}
	}
}

func TestRulesNameOnlyExportedMetrics(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &file); err != nil {
		t.Fatal(err)
	}
	exported := exportedNames(t)
	runbook, err := os.ReadFile(filepath.Join("..", "..", "docs", "runbook.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			for _, n := range metricNames(r.Expr) {
				if !slices.Contains(exported, n) {
					t.Errorf("alert %s: %q is not exported by serve", r.Alert, n)
				}
			}
			if r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: want for:, a severity label, a summary and a description", r.Alert)
			}
			anchor := "#" + strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], "docs/runbook.md"+anchor) {
				t.Errorf("alert %s: runbook_url %q does not point at docs/runbook.md%s", r.Alert, r.Annotations["runbook_url"], anchor)
			}
			if !bytes.Contains(runbook, []byte("\n## "+r.Alert+"\n")) {
				t.Errorf("docs/runbook.md has no section \"## %s\"", r.Alert)
			}
		}
	}
}

func TestDocsNameEveryMetric(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "serve.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	for _, d := range allDescs {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read %s", d)
		}
		row := "| `" + m[1] + "` |"
		i := bytes.Index(b, []byte(row))
		if i < 0 {
			t.Errorf("docs/serve.md has no table row %q", row)
			continue
		}
		line, _, _ := bytes.Cut(b[i:], []byte("\n"))
		for _, l := range strings.Split(m[2], ",") {
			if l != "" && !bytes.Contains(line, []byte("`"+l+"`")) {
				t.Errorf("docs/serve.md row of %s does not name its label %q", m[1], l)
			}
		}
	}
}
