package schematest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// documents are the output documents of the tool, by kind.
var documents = []struct {
	kind, file string
	v          any
}{
	{api.KindReport, "report.schema.json", api.Report{}},
	{api.KindWatchMetrics, "watchmetrics.schema.json", api.WatchMetrics{}},
	{api.KindReplay, "replay.schema.json", api.Replay{}},
	{api.KindManifest, "bundle.schema.json", api.Manifest{}},
	{api.KindFleetReport, "fleetreport.schema.json", api.FleetReport{}},
}

func root() string { return filepath.Join("..", "..") }

// generate reflects v's type into a JSON Schema (draft 2020-12).
func generate(kind string, v any) ([]byte, error) {
	enums, err := contractEnums()
	if err != nil {
		return nil, err
	}
	r := &jsonschema.Reflector{
		// Field names are the json tags; a field without omitempty is
		// always written, so it is required.
		RequiredFromJSONSchemaTags: false,
		Mapper:                     mapper(enums),
	}
	s := r.Reflect(v)
	s.ID = jsonschema.ID("https://github.com/watch-doctor/watch-doctor/docs/schemas/" + strings.ToLower(kind) + ".schema.json")
	s.Title = "watch-doctor " + kind + " (" + api.GroupVersion + ")"
	for name, def := range s.Definitions {
		if err := markNullable(reflect.TypeOf(v), name, def); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// mapper gives the schema of types that marshal themselves, and of the
// contract's typed strings with their values as an enum.
func mapper(enums map[reflect.Type][]any) func(reflect.Type) *jsonschema.Schema {
	return func(t reflect.Type) *jsonschema.Schema {
		switch t {
		case reflect.TypeOf(replay.Duration{}):
			return &jsonschema.Schema{Type: "string", Description: "a Go duration, e.g. 1m30s"}
		case reflect.TypeOf(api.ByteSize(0)):
			return &jsonschema.Schema{Type: "integer", Description: "bytes"}
		}
		if e, ok := enums[t]; ok {
			return &jsonschema.Schema{Type: "string", Enum: e}
		}
		return nil
	}
}

// markNullable lets a property be null where encoding/json writes null: a
// pointer, slice or map field without omitempty. name is the definition of
// a struct type reachable from root.
func markNullable(rootType reflect.Type, name string, def *jsonschema.Schema) error {
	t := findType(rootType, name, map[reflect.Type]bool{})
	if t == nil {
		return fmt.Errorf("definition %q: no such struct type under %s", name, rootType)
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		parts := strings.Split(tag, ",")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Pointer {
			// The fields of a nil embedded pointer are left out.
			optional(def, f.Type.Elem())
			continue
		}
		if tag == "-" || !f.IsExported() || strings.Contains(tag, "omitempty") {
			continue
		}
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
		default:
			continue
		}
		jsonName := parts[0]
		if jsonName == "" {
			jsonName = f.Name
		}
		if def.Properties == nil {
			continue
		}
		p, ok := def.Properties.Get(jsonName)
		if !ok {
			continue
		}
		def.Properties.Set(jsonName, &jsonschema.Schema{OneOf: []*jsonschema.Schema{p, {Type: "null"}}})
	}
	return nil
}

// optional removes the JSON names of t's fields from def's required list.
func optional(def *jsonschema.Schema, t reflect.Type) {
	drop := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		drop[strings.Split(t.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	kept := def.Required[:0]
	for _, r := range def.Required {
		if !drop[r] {
			kept = append(kept, r)
		}
	}
	def.Required = kept
}

// findType finds the struct type named name reachable from t.
func findType(t reflect.Type, name string, seen map[reflect.Type]bool) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	if t.Name() == name {
		return t
	}
	for i := 0; i < t.NumField(); i++ {
		if found := findType(t.Field(i).Type, name, seen); found != nil {
			return found
		}
	}
	return nil
}

// TestSchemasMatchTypes keeps docs/schemas in step with the types: the
// committed schema is what the types generate (go test -update rewrites it).
func TestSchemasMatchTypes(t *testing.T) {
	for _, d := range documents {
		t.Run(d.kind, func(t *testing.T) {
			want, err := generate(d.kind, d.v)
			if err != nil {
				t.Fatal(err)
			}
			golden.AssertFile(t, filepath.Join(root(), "docs", "schemas", d.file), want)
		})
	}
}

// TestGoldensValidate validates every JSON or YAML document of the
// repository's goldens whose kind is one of ours against its schema, and
// checks that they all carry the one apiVersion.
func TestGoldensValidate(t *testing.T) {
	c := validator.NewCompiler()
	schemas := map[string]*validator.Schema{}
	for _, d := range documents {
		path := filepath.Join(root(), "docs", "schemas", d.file)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := validator.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := c.AddResource(d.file, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(d.file)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		schemas[d.kind] = s
	}

	files, err := documentFiles(root())
	if err != nil {
		t.Fatal(err)
	}
	validated := map[string]int{}
	for _, rel := range files {
		if strings.HasPrefix(rel, "docs/") || strings.Contains(rel, "/scenarios/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root(), rel))
		if err != nil {
			t.Fatal(err)
		}
		js, ok := asJSON(b)
		if !ok {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if json.Unmarshal(js, &head) != nil {
			continue
		}
		s, ours := schemas[head.Kind]
		if !ours {
			continue
		}
		if head.APIVersion != api.GroupVersion {
			t.Errorf("%s: apiVersion %q, want %q", rel, head.APIVersion, api.GroupVersion)
		}
		inst, err := validator.UnmarshalJSON(bytes.NewReader(js))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s does not validate against its %s schema:\n%v", rel, head.Kind, err)
		}
		validated[head.Kind]++
	}
	for _, d := range documents {
		if d.kind == api.KindManifest || d.kind == api.KindFleetReport {
			// No golden of these in the tree: bundles are written by
			// collect, fleet reports by diagnose --contexts (e2e).
			continue
		}
		if validated[d.kind] == 0 {
			t.Errorf("no golden of kind %s was found to validate", d.kind)
		}
	}
	t.Logf("validated: %v", validated)
}

// asJSON returns b as JSON: b itself, or b converted from YAML.
func asJSON(b []byte) ([]byte, bool) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, false
	}
	if trimmed[0] == '{' {
		return trimmed, json.Valid(trimmed)
	}
	if !bytes.Contains(b, []byte("apiVersion:")) {
		return nil, false
	}
	js, err := yaml.YAMLToJSON(b)
	return js, err == nil
}

// documentFiles lists the .json, .yaml and .golden files under root,
// relative to it with slashes, walking the tree (no git needed, so the test
// runs in an exported tree too). It skips hidden directories (.git, caches)
// what the build and the tools write (bin, dist, bench/out, node_modules).
func documentFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			switch rel = filepath.ToSlash(rel); {
			case rel == ".":
			case strings.HasPrefix(name, "."), name == "node_modules", rel == "bin", rel == "dist", rel == "bench/out":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".json", ".yaml", ".golden":
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}
