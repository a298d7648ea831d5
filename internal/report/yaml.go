package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// writeYAML writes v as YAML holding the very values its JSON form holds
// (issue 35: ESC was stored as the text \x1b). The document goes through
// JSON, so both forms use the same field names and the same strings
// (invalid UTF-8 is U+FFFD in both); map keys are sorted. A string holding
// a character a terminal acts on, or that YAML cannot carry raw (C0 and C1
// controls, DEL, the bidirectional formatting characters), is written
// double-quoted, where YAML escapes it: the encoder escapes the controls
// (ESC as \e, NUL as \0) and jsonSafe the characters it leaves raw
// (U+202E as \u202e). Such characters can only sit inside those
// double-quoted scalars, where the escape decodes to the same character.
func writeYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var g any
	if err := d.Decode(&g); err != nil {
		return err
	}
	n, err := yamlNode(g)
	if err != nil {
		return err
	}
	js := &jsonSafe{w: w}
	enc := yaml.NewEncoder(js)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(n); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return js.flush()
}

// yamlNode returns the YAML node of g, a document decoded from JSON with
// json.Number.
func yamlNode(g any) (*yaml.Node, error) {
	switch x := g.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}, nil
	case json.Number:
		tag := "!!float"
		if _, err := x.Int64(); err == nil {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: x.String()}, nil
	case string:
		return yamlString(x), nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := yamlNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c, err := yamlNode(x[k])
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, yamlString(k), c)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a value of type %T in a document decoded from JSON", g)
}

// yamlString is the node of s: double-quoted when s holds a character
// YAML must escape or a terminal acts on (writeYAML), or is a word a YAML
// 1.1 reader (go.yaml.in/yaml/v2, under sigs.k8s.io/yaml) takes for a
// boolean or a merge key; else in the style the encoder chooses (it
// quotes what a YAML 1.2 reader takes for another type).
func yamlString(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if len(s) <= 3 {
		switch strings.ToLower(s) {
		case "y", "yes", "n", "no", "on", "off", "<<":
			n.Style = yaml.DoubleQuotedStyle
			return n
		}
	}
	for _, r := range s {
		if unicode.IsControl(r) || isBidi(r) || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			n.Style = yaml.DoubleQuotedStyle
			break
		}
	}
	return n
}
