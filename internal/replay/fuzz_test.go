package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds the scenario parser arbitrary bytes: it must return a
// scenario or an error, never panic, and whatever it accepts must be
// valid again after a round trip.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.yaml"))
	for _, name := range BuiltinNames() {
		if b, err := BuiltinSource(name); err == nil {
			f.Add(b)
		}
	}
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"name":"x","duration":1,"resources":[{"name":"p","objects":[{"count":1,"bytes":1}]}],"clients":[{"name":"c","model":"paced 1e300/s"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		out, err := sc.Marshal()
		if err != nil {
			t.Fatalf("accepted scenario does not marshal: %v", err)
		}
		if _, err := Parse(bytes.NewReader(out)); err != nil {
			t.Fatalf("accepted scenario does not parse after a round trip: %v\n%s", err, out)
		}
	})
}
