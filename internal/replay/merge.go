package replay

import (
	"fmt"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Prepend puts the columns of other, a replay of the same scenario run
// elsewhere (the upstream column of another release, run by its own
// module in a subprocess), before res's, with their timeline series, and
// recomputes res's verdict over all of them. Both must have replayed the
// same virtual time at the same tick, and both or neither a timeline.
func Prepend(res, other *api.Replay) error {
	switch {
	case other.Kind != api.KindReplay:
		return fmt.Errorf("not a replay result: kind %q", other.Kind)
	case other.Scenario != res.Scenario:
		return fmt.Errorf("a replay of scenario %q, want %q", other.Scenario, res.Scenario)
	case other.DurationSeconds != res.DurationSeconds || other.TickSeconds != res.TickSeconds:
		return fmt.Errorf("a replay of %vs at ticks of %vs, want %vs at %vs", other.DurationSeconds, other.TickSeconds, res.DurationSeconds, res.TickSeconds)
	case (other.Timeline == nil) != (res.Timeline == nil):
		return fmt.Errorf("timeline recorded in one replay only")
	}
	if res.Timeline != nil {
		if len(res.Timeline.Seconds) == 0 {
			res.Timeline.Seconds = other.Timeline.Seconds
		} else if len(other.Timeline.Seconds) != len(res.Timeline.Seconds) && len(other.Timeline.Seconds) > 0 {
			return fmt.Errorf("a timeline of %d ticks, want %d", len(other.Timeline.Seconds), len(res.Timeline.Seconds))
		}
		res.Timeline.Series = append(append([]api.TimelineSeries(nil), other.Timeline.Series...), res.Timeline.Series...)
	}
	res.Columns = append(append([]api.Column(nil), other.Columns...), res.Columns...)
	res.Verdict = verdictOf(res)
	return nil
}
