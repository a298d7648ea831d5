package report

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		err  string
	}{
		{"", FormatTable, ""},
		{"table", FormatTable, ""},
		{"WIDE", FormatWide, ""},
		{"json", FormatJSON, ""},
		{"Yaml", FormatYAML, ""},
		{"xml", "", `unsupported output format "xml": use one of table, wide, json, yaml`},
		{"name", "", `unsupported output format "name": use one of table, wide, json, yaml`},
	} {
		got, err := ParseFormat(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			var ue *UnsupportedFormatError
			if !errors.As(err, &ue) || ue.Value != tc.in {
				t.Errorf("ParseFormat(%q) err = %#v, want an *UnsupportedFormatError of it", tc.in, err)
			}
		}
		if got != tc.want || gotErr != tc.err {
			t.Errorf("ParseFormat(%q) = %q, %q; want %q, %q", tc.in, got, gotErr, tc.want, tc.err)
		}
	}
}

func TestFormatStructured(t *testing.T) {
	got := map[Format]bool{}
	for _, f := range Formats() {
		got[f] = f.Structured()
	}
	want := map[Format]bool{FormatTable: false, FormatWide: false, FormatJSON: true, FormatYAML: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Structured (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"table", "wide", "json", "yaml"}, FormatNames()); diff != "" {
		t.Errorf("FormatNames (-want +got):\n%s", diff)
	}
}

// TestWriteStructuredSameNames: YAML goes through JSON, so both carry the
// JSON field names.
func TestWriteStructuredSameNames(t *testing.T) {
	v := struct {
		Name  string `json:"clientName"`
		Seats int    `json:"seats,omitempty"`
	}{Name: "slow"}
	for f, want := range map[Format]string{
		FormatJSON: "{\n  \"clientName\": \"slow\"\n}\n",
		FormatYAML: "clientName: slow\n",
	} {
		var b bytes.Buffer
		if err := writeStructured(&b, v, f); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f, diff)
		}
	}
	if err := writeStructured(&bytes.Buffer{}, v, FormatTable); err == nil || err.Error() != `format "table" is not a structured format` {
		t.Errorf("table err = %v", err)
	}
}
