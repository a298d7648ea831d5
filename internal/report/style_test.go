package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mattn/go-runewidth"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func styleReport() *api.Report {
	two := 2
	return &api.Report{
		APIServers: []api.APIServer{{Name: "a", DumpFormat: "debug=2"}},
		Findings: []api.Finding{
			{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, BlockedMinutes: &two, Client: &api.Client{User: "slow-informer", Match: api.MatchExact}},
			{Type: api.SlowInitialEvents, Severity: api.SeverityWarning, BlockedMinutes: &two, Client: &api.Client{User: "paced-reader", Match: api.MatchExact}},
		},
		Advice: []string{"slow-informer stopped reading its watch during the initial-events replay and holds a seat", "日本語 日本語 日本語 日本語 日本語 日本語", "äääääääää äääääääää äääääääää"},
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestSeverityIsStyledAsItIsWritten: with Color the severity cells are in
// colour and the layout is that of the plain table, escapes aside.
func TestSeverityIsStyledAsItIsWritten(t *testing.T) {
	var plain, color bytes.Buffer
	if err := Print(&plain, styleReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Print(&color, styleReport(), Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.String(), ansi.ReplaceAllString(color.String(), "")); diff != "" {
		t.Errorf("colour changed the layout (-plain +colour without escapes):\n%s", diff)
	}
	for _, want := range []string{"   \x1b[31mcritical\x1b[0m   ", "   \x1b[33mwarning\x1b[0m    "} {
		if !strings.Contains(color.String(), want) {
			t.Errorf("no %q in:\n%q", want, color.String())
		}
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("colour without Color:\n%q", plain.String())
	}
}

// TestListLinesWrapByDisplayWidth: with Width, advice lines are wrapped at
// spaces with a hanging indent, measured in terminal columns (a CJK
// character takes two).
func TestListLinesWrapByDisplayWidth(t *testing.T) {
	var b bytes.Buffer
	if err := Print(&b, styleReport(), Options{Width: 40}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	_, advice, _ := strings.Cut(out, "Advice:\n")
	for _, l := range strings.Split(strings.TrimSuffix(advice, "\n"), "\n") {
		if w := runewidth.StringWidth(l); w > 40 {
			t.Errorf("line of %d columns, want at most 40: %q", w, l)
		}
	}
	if !strings.Contains(advice, "  - slow-informer stopped reading its\n    watch") {
		t.Errorf("advice not wrapped with a hanging indent:\n%s", advice)
	}
	// By bytes, three of the first and two of the second would fit.
	if !strings.Contains(advice, "  - 日本語 日本語 日本語 日本語 日本語\n    日本語\n  - äääääääää äääääääää äääääääää\n") {
		t.Errorf("wide characters not wrapped by display width:\n%s", advice)
	}
}
