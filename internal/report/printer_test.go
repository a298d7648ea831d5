package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// hostile is a name from outside; prose (advice, evidence, messages) is
// the engines' own multi-line text around such names, so only the cells
// get its newline.
const (
	hostile      = "evil\u202etxt.exe\tx\x1b[2J\u009b\nrow"
	hostileProse = "evil\u202etxt.exe\tx\x1b[2J\u009b"
)

// TestEveryCellIsEscaped: whatever a document holds from outside is
// escaped in every text form of every document: bidi controls, tabs,
// newlines in a cell, C0 and C1 controls.
func TestEveryCellIsEscaped(t *testing.T) {
	two := 2
	f := api.Finding{Type: api.StuckInitialEvents, Severity: api.SeverityCritical, BlockedMinutes: &two, APIServer: hostile,
		Client:     &api.Client{User: hostile, Verb: "watch", Path: "/api/v1/" + hostile, Namespace: hostile, Match: api.MatchAmbiguous},
		Candidates: []api.Request{{User: hostile, Path: hostile}}, Evidence: []string{hostileProse}, Message: hostileProse}
	r := &api.Report{APIServers: []api.APIServer{{Name: hostile, DumpFormat: "debug=2", Notes: []string{hostileProse}}}, Findings: []api.Finding{f},
		UnmatchedRequests: []api.Request{{User: hostile, Path: hostile}}, Advice: []string{hostileProse}, Warnings: []string{hostileProse}}
	docs := map[string]any{
		"report": r,
		"fleet":  &api.FleetReport{Clusters: []api.ClusterReport{{Context: hostile, Server: hostile, Report: r, Error: hostile}}},
		"replay": &api.Replay{Scenario: hostile, Description: hostileProse, Columns: []api.Column{{Name: hostile, Clients: []api.ClientResult{{Name: hostile, Model: hostile, Scope: hostile}}}}},
		"list":   ScenarioList{{Name: hostile, Description: hostile}},
	}
	for name, doc := range docs {
		for _, o := range []Options{{}, {Format: FormatWide}, {NoHeaders: true}, {Color: true, Width: 30}} {
			var b bytes.Buffer
			if err := Print(&b, doc, o); err != nil {
				t.Fatalf("%s %+v: %v", name, o, err)
			}
			out := ansi.ReplaceAllString(b.String(), "")
			if strings.ContainsAny(out, "\u202e\t\u009b\x1b") || strings.Contains(out, "\nrow") {
				t.Errorf("%s %+v: raw control in:\n%q", name, o, out)
			}
			if !strings.Contains(out, `evil\u202etxt.exe`) {
				t.Errorf("%s %+v: the escaped name is missing:\n%s", name, o, out)
			}
		}
	}
}

// TestPrintRefusesUnknownDocuments: a text printer names the type it has
// no form for; a structured one encodes anything.
func TestPrintRefusesUnknownDocuments(t *testing.T) {
	var ue *UnsupportedDocumentError
	if err := Print(&bytes.Buffer{}, struct{}{}, Options{}); !errors.As(err, &ue) {
		t.Errorf("table of a struct{}: %v, want *UnsupportedDocumentError", err)
	}
	var b bytes.Buffer
	if err := Print(&b, map[string]int{"a": 1}, Options{Format: FormatJSON}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Errorf("json: %q, %v", b.String(), err)
	}
	var fe *UnsupportedFormatError
	if _, err := New(Options{Format: "xml"}); !errors.As(err, &fe) {
		t.Errorf("New(xml): %v, want *UnsupportedFormatError", err)
	}
}
