package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// appendIndent indents as json.Indent does, byte for byte, on what
// json.Marshal writes: nested and empty objects and arrays, escaped
// quotes and backslashes in strings, brackets and commas inside strings,
// HTML escapes, numbers, literals; and on every golden JSON report of
// this package, compacted first.
func TestAppendIndent(t *testing.T) {
	inputs := []any{
		map[string]any{},
		[]any{},
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{1, "x", nil, true, false, 2.5}},
		map[string]any{"s": `a "quoted" \ back, [not] {structure}: yes`, "html": "<a&b>", "u": "\u2028\x01é"},
		[]any{[]any{[]any{map[string]any{"deep": []any{map[string]any{}}}}}},
		"just a string",
		42,
	}
	var docs [][]byte
	for _, in := range inputs {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	goldens, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	goldens = append(goldens, more...)
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		docs = append(docs, c.Bytes())
	}
	if len(goldens) == 0 {
		t.Error("no golden JSON in testdata: the test would check only the literals")
	}
	for _, d := range docs {
		for _, p := range [][2]string{{"", "  "}, {"    ", "  "}, {">", "\t"}} {
			var want bytes.Buffer
			if err := json.Indent(&want, d, p[0], p[1]); err != nil {
				t.Fatal(err)
			}
			got := appendIndent([]byte("keep:"), d, p[0], p[1])
			if diff := cmp.Diff("keep:"+want.String(), string(got)); diff != "" {
				t.Errorf("%.60s with prefix %q, indent %q (-json.Indent +appendIndent):\n%s", d, p[0], p[1], diff)
			}
		}
	}
}

// FuzzAppendIndent: on any valid JSON, compacted as json.Marshal writes
// it, appendIndent agrees with json.Indent.
func FuzzAppendIndent(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"x\"]"},[]],"c":{}}`))
	f.Add([]byte(`"\\"`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var c bytes.Buffer
		if json.Compact(&c, in) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, c.Bytes(), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndent(nil, c.Bytes(), "    ", "  "); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%q:\njson.Indent  %q\nappendIndent %q", c.Bytes(), want.Bytes(), got)
		}
	})
}
