package report

import (
	"fmt"
	"strconv"

	"github.com/watch-doctor/watch-doctor/internal/english"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// costLines say what the run cost each API server read live (or recorded
// by a bundle): "cost to <instance>: 1 stop-the-world pause (at most
// 0.08 ms, 0.08 ms in all), 4.1 MiB read", then the cost's note once per
// distinct note (the pause histogram is the whole process's).
func costLines(r *api.Report) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range r.APIServers {
		c := a.Cost
		if c == nil {
			continue
		}
		if a.Evidence != "" {
			out = append(out, fmt.Sprintf("evidence on %s: %s", Escape(a.Name), Escape(a.Evidence)))
		}
		out = append(out, fmt.Sprintf("cost to %s: %s, %s read", Escape(a.Name), pausesText(c), byteSize(float64(c.BytesRead))))
		if c.Note != "" && !seen[c.Note] {
			seen[c.Note] = true
			out = append(out, "  "+Escape(c.Note))
		}
	}
	return out
}

// pausesText is the pause part of a cost line.
func pausesText(c *api.ServerCost) string {
	switch {
	case !c.PausesMeasured:
		return "stop-the-world not measured"
	case c.Pauses == 0:
		return "no stop-the-world pause"
	}
	most := "the longest beyond the last bucket"
	if c.LargestPauseAtMostSeconds > 0 {
		most = "at most " + millis(c.LargestPauseAtMostSeconds)
	}
	stopping := ""
	if st := c.StoppingSeconds; st != nil {
		stopping = ", " + millis(*st) + " of it stopping the world"
	}
	return fmt.Sprintf("%s (%s, %s in all%s)", english.Count(int(c.Pauses), "stop-the-world pause", "stop-the-world pauses"), most, millis(c.PauseSeconds), stopping)
}

// millis prints seconds as milliseconds with two decimals ("0.08 ms").
func millis(s float64) string {
	return strconv.FormatFloat(s*1e3, 'f', 2, 64) + " ms"
}
