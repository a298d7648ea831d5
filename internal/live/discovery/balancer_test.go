package discovery

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// When the instances discovered do not answer on their own addresses,
// the notes say so, why, and name each one not read directly.
func TestUnpinnedNotes(t *testing.T) {
	t.Parallel()
	results := []model.InstanceResult{
		{Instance: model.Instance{Name: "10.0.0.1:6443", Pinned: true}, Errors: []error{errors.New("10.0.0.1:6443: connection refused")}},
		{Instance: model.Instance{Name: "10.0.0.2:6443", Pinned: true}},
	}
	want := []string{
		"none of the 2 API server instances is reachable directly (10.0.0.1:6443: connection refused); reading through the kubeconfig host lb:443, one connection per instance, told apart by process_start_time_seconds",
		"instance 10.0.0.1:6443 not read directly",
		"instance 10.0.0.2:6443 not read directly",
	}
	if diff := cmp.Diff(want, unpinnedNotes(results, "lb:443")); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if got := unpinnedNotes([]model.InstanceResult{{Instance: model.Instance{Name: "lb:443"}}}, "lb:443"); got != nil {
		t.Errorf("notes of instances not discovered as pinned: %q, want none", got)
	}
}
