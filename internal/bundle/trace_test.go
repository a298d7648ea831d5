package bundle

import (
	"testing"
)

func TestIsTraceHeader(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"go 1.26 trace\x00\x00\x00", true},
		{"go 1.22 trace\x00\x00\x00\x01", true},
		{"go 1.21 trace\x00\x00\x00", true}, // recognised; the reader refuses it with its version
		{"go 1.26 traces", false},
		{"go 1. trace\x00", false},
		{"go 1.2600 trace\x00", false},
		{"goroutine 1 [running]:", false},
		{"go 1.26", false},
	}
	for _, tt := range tests {
		if got := isTraceHeader([]byte(tt.in)); got != tt.want {
			t.Errorf("isTraceHeader(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
