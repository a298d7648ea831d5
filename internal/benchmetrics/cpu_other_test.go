//go:build !unix

package benchmetrics

import "testing"

func TestProcessCPUNotMeasured(t *testing.T) {
	if c, ok := processCPU(); ok || c != 0 {
		t.Errorf("processCPU() = %v, %v; want 0, false where it is not measured", c, ok)
	}
}
