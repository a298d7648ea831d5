package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// findingTypeConstants reads the constants of type FindingType declared in
// the non-test Go files of this package, with go/parser: what the code
// declares, whether or not a table lists it.
func findingTypeConstants(t *testing.T) []FindingType {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []FindingType
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "FindingType" {
				return true
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: a FindingType constant that is not a string literal", fset.Position(v.Pos()))
					continue
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, FindingType(s))
			}
			return true
		})
	}
	return out
}

// TestFindingTypesAreTheConstants: every FindingType constant has one row
// of FindingTypes, in declaration order, and every row a constant. A type
// declared without a row (or a row left behind) fails here; the summary,
// the advice, the docs and the schema read the rows, and their own tests
// fail when one lacks what a row asks of it.
func TestFindingTypesAreTheConstants(t *testing.T) {
	consts := findingTypeConstants(t)
	if len(consts) < 6 {
		t.Fatalf("found %d FindingType constants, want every one of the package's", len(consts))
	}
	var rows []FindingType
	for _, r := range FindingTypes() {
		rows = append(rows, r.Type)
	}
	if diff := cmp.Diff(consts, rows); diff != "" {
		t.Errorf("FindingTypes rows against the FindingType constants (-constants +rows):\n%s", diff)
	}
}

// TestFindingTypeRowsAreComplete: each row gives every part, and counts
// into a Summary field of its own.
func TestFindingTypeRowsAreComplete(t *testing.T) {
	var shared Summary
	counted := map[*int]FindingType{}
	for _, r := range FindingTypes() {
		if len(r.Severities) == 0 || r.SeverityRule == "" || r.Rule == "" || r.Do == "" || r.One == "" || r.Many == "" || r.Count == nil {
			t.Errorf("%s: a row with a part missing: %+v", r.Type, r)
			continue
		}
		for _, s := range r.Severities {
			if s.Rank() < 0 {
				t.Errorf("%s: severity %q is not one of the contract's", r.Type, s)
			}
			if !strings.Contains(r.SeverityRule, string(s)) {
				t.Errorf("%s: SeverityRule %q does not name %q", r.Type, r.SeverityRule, s)
			}
		}
		if p := r.Count(&shared); counted[p] != "" {
			t.Errorf("%s and %s count into the same Summary field", counted[p], r.Type)
		} else {
			counted[p] = r.Type
		}
		var s Summary
		*r.Count(&s) = 7
		if reflect.DeepEqual(s, Summary{}) {
			t.Errorf("%s: Count does not point into the Summary it is given", r.Type)
		}
		if got, ok := FindingTypeOf(r.Type); !ok || got.Type != r.Type {
			t.Errorf("FindingTypeOf(%s) = %v, %v", r.Type, got.Type, ok)
		}
	}
	if _, ok := FindingTypeOf("NoSuchType"); ok {
		t.Error("FindingTypeOf found a row for an undeclared type")
	}
}
