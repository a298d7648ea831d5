package model

import (
	"io"
	"strings"
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestCountingReader(t *testing.T) {
	t.Parallel()
	c := &CountingReader{R: strings.NewReader("0123456789")}
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "0123456789" || c.N != 10 {
		t.Errorf("read %q (%v), counted %d; want all 10 bytes", b, err, c.N)
	}
}

func TestInstanceResultFailed(t *testing.T) {
	t.Parallel()
	failed := api.FetchInfo{Error: "refused"}
	for _, tt := range []struct {
		name    string
		samples []api.Sample
		want    bool
	}{
		{"no sample", nil, true},
		{"every fetch failed", []api.Sample{{Fetches: []api.FetchInfo{failed, failed}}}, true},
		{"one fetch read", []api.Sample{{Fetches: []api.FetchInfo{failed}}, {Fetches: []api.FetchInfo{failed, {}}}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := (InstanceResult{Samples: tt.samples}).Failed(); got != tt.want {
				t.Errorf("Failed() = %v, want %v", got, tt.want)
			}
		})
	}
}
