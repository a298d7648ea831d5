package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestCostLines(t *testing.T) {
	const whole = "the runtime's histogram is the whole server process's"
	r := &api.Report{APIServers: []api.APIServer{
		{Name: "a:6443", Evidence: "an execution trace\x1b[2J", Cost: &api.ServerCost{PausesMeasured: true, Pauses: 1, PauseSeconds: 0.00008, LargestPauseAtMostSeconds: 8.192e-05, BytesRead: 4300000, Note: whole}},
		{Name: "b:6443", Cost: &api.ServerCost{PausesMeasured: true, BytesRead: 512, Note: whole}},
		{Name: "c:6443", Cost: &api.ServerCost{PausesMeasured: true, Pauses: 3, PauseSeconds: 4.2, LargestPauseAtMostSeconds: -1, StoppingSeconds: ptrTo(4.19), BytesRead: 70 << 20, Note: whole}},
		{Name: "d:6443", Cost: &api.ServerCost{BytesRead: 2048, Note: "the server exports no go_sched_pauses_total_other_seconds"}},
		{Name: "e:6443"},
	}}
	want := []string{
		`evidence on a:6443: an execution trace\x1b[2J`,
		"cost to a:6443: 1 stop-the-world pause (at most 0.08 ms, 0.08 ms in all), 4.1 MiB read",
		"  " + whole,
		"cost to b:6443: no stop-the-world pause, 512 B read",
		"cost to c:6443: 3 stop-the-world pauses (the longest beyond the last bucket, 4200.00 ms in all, 4190.00 ms of it stopping the world), 70 MiB read",
		"cost to d:6443: stop-the-world not measured, 2 KiB read",
		"  the server exports no go_sched_pauses_total_other_seconds",
	}
	if diff := cmp.Diff(want, costLines(r)); diff != "" {
		t.Errorf("costLines (-want +got):\n%s", diff)
	}
}

func ptrTo[T any](v T) *T { return &v }
