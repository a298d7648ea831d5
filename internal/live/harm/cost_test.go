package harm

import (
	"testing"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

func TestPausesText(t *testing.T) {
	t.Parallel()
	stopping := 0.0005
	for _, tt := range []struct {
		name string
		cost api.ServerCost
		want string
	}{
		{"not measured", api.ServerCost{Note: "no histogram"}, "stop-the-world pauses not measured (no histogram)"},
		{"measured", api.ServerCost{PausesMeasured: true, Pauses: 2, PauseSeconds: 0.0125}, "2 stop-the-world pause(s), 12.500 ms in all"},
		{"with stopping", api.ServerCost{PausesMeasured: true, Pauses: 1, PauseSeconds: 0.001, StoppingSeconds: &stopping}, "1 stop-the-world pause(s), 1.000 ms in all (0.500 ms of it stopping the world)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pausesText(&tt.cost); got != tt.want {
				t.Errorf("pausesText = %q, want %q", got, tt.want)
			}
		})
	}
}
