package schematest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// enumTypes are the contract's typed strings whose values the schemas list
// as an enum: every constant of the type declared in pkg/api/v1alpha1, read
// from its source, so a new constant is in the schema with no edit here.
// FindingType's values come from api.FindingTypes instead, the one table of
// finding types (pkg/api/v1alpha1's TestFindingTypesAreTheConstants checks
// that it holds every constant).
var enumTypes = map[string]reflect.Type{
	"Severity":     reflect.TypeOf(api.Severity("")),
	"Match":        reflect.TypeOf(api.Match("")),
	"Phase":        reflect.TypeOf(api.Phase("")),
	"HandlerBlock": reflect.TypeOf(api.HandlerBlock("")),
	"Outcome":      reflect.TypeOf(api.Outcome("")),
}

// contractEnums gives the values of each enum type, in source order.
func contractEnums() (map[reflect.Type][]any, error) {
	consts, err := typedConstants(filepath.Join(root(), "pkg", "api", "v1alpha1"))
	if err != nil {
		return nil, err
	}
	enums := map[reflect.Type][]any{}
	for name, t := range enumTypes {
		if len(consts[name]) == 0 {
			return nil, fmt.Errorf("pkg/api/v1alpha1 declares no constant of type %s", name)
		}
		for _, v := range consts[name] {
			enums[t] = append(enums[t], v)
		}
	}
	ft := reflect.TypeOf(api.FindingType(""))
	for _, row := range api.FindingTypes() {
		enums[ft] = append(enums[ft], string(row.Type))
	}
	return enums, nil
}

// typedConstants reads the string constants of the non-test Go files of
// dir, by the name of their declared type.
func typedConstants(dir string) (map[string][]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string][]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				id, ok := vs.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return nil, fmt.Errorf("%s: a constant of type %s that is not a string literal", fset.Position(v.Pos()), id.Name)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						return nil, err
					}
					out[id.Name] = append(out[id.Name], s)
				}
			}
		}
	}
	return out, nil
}

// TestSchemaEnums checks the enums the schema carries: the Report schema
// lists every finding type, severity, match and phase, so a document with a
// value the contract does not declare fails TestGoldensValidate.
func TestSchemaEnums(t *testing.T) {
	enums, err := contractEnums()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]any{
		"Severity":    {"critical", "warning", "info"},
		"Match":       {"exact", "likely", "ambiguous"},
		"FindingType": nil,
	}
	for _, row := range api.FindingTypes() {
		want["FindingType"] = append(want["FindingType"], string(row.Type))
	}
	got := map[string][]any{
		"Severity":    enums[reflect.TypeOf(api.Severity(""))],
		"Match":       enums[reflect.TypeOf(api.Match(""))],
		"FindingType": enums[reflect.TypeOf(api.FindingType(""))],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("enums (-want +got):\n%s", diff)
	}
	phases := enums[reflect.TypeOf(api.Phase(""))]
	for _, p := range []api.Phase{api.PhaseInitial, api.PhaseStreaming, api.PhaseClosed, api.PhaseWaitingForCache, api.PhaseRelist} {
		if !slices.Contains(phases, any(string(p))) {
			t.Errorf("Phase enum %v lacks %q", phases, p)
		}
	}
	b, err := generate(api.KindReport, api.Report{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range api.FindingTypes() {
		if !strings.Contains(string(b), strconv.Quote(string(row.Type))) {
			t.Errorf("the Report schema does not list the finding type %s", row.Type)
		}
	}
}
