package model

import (
	"bytes"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestConfigWants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		only []api.FileKind
		kind api.FileKind
		want bool
	}{
		{name: "no Only: every kind", kind: api.FileGoroutineDebug2, want: true},
		{name: "listed", only: []api.FileKind{api.FileMetrics}, kind: api.FileMetrics, want: true},
		{name: "not listed", only: []api.FileKind{api.FileMetrics}, kind: api.FileGoroutineDebug2, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Config{Only: tt.only}).Wants(tt.kind); got != tt.want {
				t.Errorf("wants(%s) = %v, want %v", tt.kind, got, tt.want)
			}
		})
	}
}

func TestConfigProgress(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	cfg := Config{Progress: &buf}
	cfg.Progressf("waiting %s%s", "5s", english.Paren("--interval"))
	cfg.Progressf("done%s", english.Paren(""))
	if got, want := buf.String(), "waiting 5s (--interval)\ndone\n"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
	// Without a writer, nothing is written and nothing fails.
	Config{}.Progressf("unseen")
}
