package replay

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed scenarios/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the built-in scenarios.
func BuiltinNames() []string {
	entries, _ := builtinFS.ReadDir("scenarios")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Builtin returns a built-in scenario by name.
func Builtin(name string) (*Scenario, error) {
	data, err := builtinFS.ReadFile(path.Join("scenarios", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q: use one of %s, or a YAML file", name, strings.Join(BuiltinNames(), ", "))
	}
	sc, err := Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("built-in scenario %q: %w", name, err)
	}
	return sc, nil
}

// BuiltinSource returns a built-in scenario's YAML.
func BuiltinSource(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile(path.Join("scenarios", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q: use one of %s", name, strings.Join(BuiltinNames(), ", "))
	}
	return data, nil
}
