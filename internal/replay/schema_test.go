package replay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// TestSchemaMatchesTypes keeps docs/scenario.schema.json in step with the
// scenario types: every JSON field of Scenario, Resource, ObjectGroup,
// UpdateStream, Transport and Client is a property of the schema's matching
// object, and nothing else is.
func TestSchemaMatchesTypes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "scenario.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Items      struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"items"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	resourceProps := schema.Defs["resource"].Properties
	var objects, updates struct {
		Items struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"items"`
	}
	if err := json.Unmarshal(resourceProps["objects"], &objects); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(resourceProps["updates"], &updates); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ   reflect.Type
		props map[string]json.RawMessage
	}{
		{reflect.TypeOf(Scenario{}), schema.Properties},
		{reflect.TypeOf(Resource{}), resourceProps},
		{reflect.TypeOf(ObjectGroup{}), objects.Items.Properties},
		{reflect.TypeOf(UpdateStream{}), updates.Items.Properties},
		{reflect.TypeOf(api.Transport{}), schema.Defs["transport"].Properties},
		{reflect.TypeOf(Client{}), schema.Defs["client"].Properties},
	}
	for _, tt := range tests {
		var fields, props []string
		for i := 0; i < tt.typ.NumField(); i++ {
			fields = append(fields, strings.Split(tt.typ.Field(i).Tag.Get("json"), ",")[0])
		}
		for p := range tt.props {
			props = append(props, p)
		}
		sort.Strings(fields)
		sort.Strings(props)
		if diff := cmp.Diff(fields, props); diff != "" {
			t.Errorf("%s: JSON fields (-) vs schema properties (+):\n%s", tt.typ.Name(), diff)
		}
	}
}
