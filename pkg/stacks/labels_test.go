package stacks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// One label parser reads both forms: debug=2's `"k": "v"` and debug=1's
// `"k":"v"`, after the opening brace.
func TestParseLabels(t *testing.T) {
	for _, tc := range []struct {
		in, sep string
		want    map[string]string
	}{
		{`}`, ": ", map[string]string{}},
		{`"user": "slow-informer", "verb": "watch"}`, ": ", map[string]string{"user": "slow-informer", "verb": "watch"}},
		{`"user":"slow-informer", "a, b":"q\"x\":{}"}`, ":", map[string]string{"user": "slow-informer", "a, b": `q"x":{}`}},
		{`"k\t":"v\n"}`, ":", map[string]string{"k\t": "v\n"}},
		{`"k":"v"`, ":", nil},           // no closing brace
		{`"k":"v"}x`, ":", nil},         // text after it
		{`"k": "v"}`, ":", nil},         // debug=2's separator in debug=1
		{`"k":"v""k2":"v2"}`, ":", nil}, // no comma between labels
		{`k:"v"}`, ":", nil},            // unquoted key
	} {
		got, ok := parseLabels([]byte(tc.in), tc.sep)
		if ok != (tc.want != nil) {
			t.Errorf("parseLabels(%q, %q) ok = %v, want %v", tc.in, tc.sep, ok, tc.want != nil)
			continue
		}
		if diff := cmp.Diff(tc.want, got); ok && diff != "" {
			t.Errorf("parseLabels(%q, %q) (-want +got):\n%s", tc.in, tc.sep, diff)
		}
	}
}
