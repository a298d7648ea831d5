//go:build unix

package benchmetrics

import "testing"

// TestProcessCPUAdvances: the process's CPU time is measured and grows
// with work.
func TestProcessCPUAdvances(t *testing.T) {
	c0, ok := processCPU()
	if !ok || c0 <= 0 {
		t.Fatalf("processCPU() = %v, %v; want a positive time", c0, ok)
	}
	c1 := c0
	for i := 0; c1 == c0 && i < 1_000_000; i++ {
		burn()
		c1, _ = processCPU()
	}
	if c1 <= c0 {
		t.Errorf("CPU time %v after work, %v before", c1, c0)
	}
}
