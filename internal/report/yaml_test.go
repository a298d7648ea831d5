package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// TestYAMLKeepsTheValuesJSONKeeps (issue 35): -o yaml stored the text
// \x1b (a backslash and three characters) where -o json stored ESC. Both
// forms of the same documents, decoded by real decoders (encoding/json;
// sigs.k8s.io/yaml and go.yaml.in/yaml/v3), hold the same values, the
// characters a terminal acts on included, and neither output holds one
// of those characters raw.
func TestYAMLKeepsTheValuesJSONKeeps(t *testing.T) {
	values := []string{
		hostileName,
		"esc\x1b[31m", "rlo\u202eevil", "nul\x00", "invalid\xff\xfeutf8", "nel\u0085csi\u009bdel\x7f",
		"lrm\u200e\u2066isolate\u2069", "line\u2028sep", "bom\ufeff",
		"new\nline\ttab", "123", "true", "null", "", " lead", "a: b", "- x", "#c", "'q'", `"dq"`, `back\slash`,
		strings.Repeat("long words ", 12) + "\x1b" + strings.Repeat(" more", 20),
		"é ü 名前", "n", "Y", "yes", "off", "On", "NO", "<<", "~", "1_000", "0x1F", "0o17", "1e3", ".inf", "2001-12-14", "10.0.0.1:6443",
	}
	docs := map[string]any{"report": hostileReport()}
	m := map[string]any{"n": 1.5, "i": 7, "b": true, "z": nil, "list": values}
	for i, v := range values {
		m["key "+v] = i
	}
	docs["map"] = m
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			var js, ys bytes.Buffer
			if err := Print(&js, doc, Options{Format: FormatJSON}); err != nil {
				t.Fatal(err)
			}
			if err := Print(&ys, doc, Options{Format: FormatYAML}); err != nil {
				t.Fatal(err)
			}
			for _, c := range append(terminalActs, "\x00", "\x7f", "\u0085", "\u2066", "\u2028") {
				if strings.Contains(ys.String(), c) {
					t.Errorf("%q reaches the yaml output raw:\n%s", c, ys.String())
				}
			}
			var fromJSON, fromSigs, fromV3 any
			if err := json.Unmarshal(js.Bytes(), &fromJSON); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(ys.Bytes(), &fromSigs); err != nil {
				t.Fatalf("sigs.k8s.io/yaml: %v\n%s", err, ys.String())
			}
			if diff := cmp.Diff(fromJSON, fromSigs); diff != "" {
				t.Errorf("json and yaml (sigs.k8s.io/yaml) hold different values (-json +yaml):\n%s", diff)
			}
			if err := yamlv3.Unmarshal(ys.Bytes(), &fromV3); err != nil {
				t.Fatalf("go.yaml.in/yaml/v3: %v\n%s", err, ys.String())
			}
			b, err := json.Marshal(fromV3) // numbers as JSON decodes them
			if err != nil {
				t.Fatal(err)
			}
			fromV3 = nil
			if err := json.Unmarshal(b, &fromV3); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromJSON, fromV3); diff != "" {
				t.Errorf("json and yaml (go.yaml.in/yaml/v3) hold different values (-json +yaml):\n%s", diff)
			}
			if name == "map" {
				list := fromSigs.(map[string]any)["list"].([]any)
				if got := list[1]; got != "esc\x1b[31m" {
					t.Errorf("yaml holds %q, want ESC itself", got)
				}
			}
		})
	}
}
