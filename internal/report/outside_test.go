package report

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// hostileName holds what a server may put in an APF user name, a request
// path or /version: OSC (a title), CSI (a colour), BEL, BS, TAB, a C1
// CSI and U+202E, which reverses what follows.
const hostileName = "sys\x1b]0;owned\x07tem:\x1b[31mnode\bX\tY\u009b2J\u202eevil"

// terminalActs are the characters a terminal acts on.
var terminalActs = []string{"\x1b", "\x07", "\b", "\u009b", "\u202e"}

func hostileReport() *api.Report {
	return &api.Report{APIVersion: api.GroupVersion, Kind: "Report",
		APIServers: []api.APIServer{{Name: "a", Version: hostileName}},
		Findings:   []api.Finding{{Type: api.FindingType("StuckInitialEvents"), Severity: api.Severity("critical"), Client: &api.Client{User: hostileName}}},
	}
}

// TestEveryOutputFormEscapesWhatCameFromOutside: no output form lets a
// character a terminal acts on through raw. JSON and YAML escape them
// without loss (TestYAMLKeepsTheValuesJSONKeeps).
func TestEveryOutputFormEscapesWhatCameFromOutside(t *testing.T) {
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			docs := []any{hostileReport()}
			if f.Structured() {
				// Any other document is encoded by the structured forms.
				docs = append(docs, map[string]string{"user": hostileName})
			}
			for _, doc := range docs {
				var b bytes.Buffer
				if err := Print(&b, doc, Options{Format: f}); err != nil {
					t.Fatalf("%T: %v", doc, err)
				}
				for _, c := range terminalActs {
					if strings.Contains(b.String(), c) {
						t.Errorf("%T: %q reaches the output raw:\n%q", doc, c, b.String())
					}
				}
				if f != FormatJSON {
					continue
				}
				var back struct {
					Findings []api.Finding `json:"findings"`
					User     string        `json:"user"`
				}
				if err := json.Unmarshal(b.Bytes(), &back); err != nil {
					t.Fatalf("%T: %v\n%s", doc, err, b.String())
				}
				got := back.User
				if len(back.Findings) > 0 {
					got = back.Findings[0].Client.User
				}
				if diff := cmp.Diff(hostileName, got); diff != "" {
					t.Errorf("%T: JSON does not carry the server's string back (-want +got):\n%s", doc, diff)
				}
			}
		})
	}
}

// TestJSONSafeHoldsASplitCharacter: a character split across two writes
// is escaped whole.
func TestJSONSafeHoldsASplitCharacter(t *testing.T) {
	var b bytes.Buffer
	js := &jsonSafe{w: &b}
	in := []byte(`"a` + "\u202e" + `b"`)
	js.Write(in[:3])
	js.Write(in[3:])
	if err := js.flush(); err != nil {
		t.Fatal(err)
	}
	if want := `"a\u202eb"`; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestEscapeValues(t *testing.T) {
	in := map[string]any{"k\x1b": []any{"a\tb", 1.5, map[string]any{"u": "\u202e"}}, "n": nil}
	want := map[string]any{`k\x1b`: []any{`a\tb`, 1.5, map[string]any{"u": `\u202e`}}, "n": nil}
	if diff := cmp.Diff(want, EscapeValues(in, EscapeCell)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestJSONSafeEscapesWhatATerminalActsOn: DEL, a C1 control and the
// bidirectional characters become \u escapes wherever they sit in a
// write, the rest (ASCII, other UTF-8, an invalid byte) passes as it is.
func TestJSONSafeEscapesWhatATerminalActsOn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"plain"`, `"plain"`},
		{"\"a\x7fb\"", `"a\u007fb"`},
		{"\"\u0085\u202e\u2066x\u00e9\"", `"\u0085\u202e\u2066xé"`},
		{"\"\xff\"", "\"\xff\""},
		{"\u202e", `\u202e`},
	} {
		var b bytes.Buffer
		js := &jsonSafe{w: &b}
		if _, err := js.Write([]byte(tc.in)); err != nil {
			t.Fatal(err)
		}
		if err := js.flush(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, b.String(), tc.want)
		}
	}
}

// TestJSONLinesEscapeASlogLine: serve's log lines (log/slog's JSON
// handler, which writes U+202E and C1 controls raw) reach stderr with
// every character a terminal acts on escaped, and decode to the value.
func TestJSONLinesEscapeASlogLine(t *testing.T) {
	var b bytes.Buffer
	slog.New(slog.NewJSONHandler(JSONLines(&b), nil)).Warn("look error", "error", hostileName)
	for _, c := range terminalActs {
		if strings.Contains(b.String(), c) {
			t.Errorf("the log line holds %q raw: %q", c, b.String())
		}
	}
	var line struct{ Error string }
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatalf("%v: %q", err, b.String())
	}
	if line.Error != hostileName {
		t.Errorf("the log line decodes to %q, want %q", line.Error, hostileName)
	}
}
