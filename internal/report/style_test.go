package report

import (
	"strings"
	"testing"
)

func TestStyle(t *testing.T) {
	text := "FINDING              SEVERITY   CLIENT\n" +
		"StuckInitialEvents   critical   slow-informer\n" +
		"SlowInitialEvents    warning    paced-reader\n" +
		"\n" +
		"Advice:\n" +
		"  - slow-informer stopped reading its watch during the initial-events replay and holds a seat\n"
	got := Style{Color: true, Width: 40}.apply(text)
	if !strings.Contains(got, "   \x1b[31mcritical\x1b[0m   ") || !strings.Contains(got, "   \x1b[33mwarning\x1b[0m    ") {
		t.Errorf("severities not coloured:\n%q", got)
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "  ") && len(l) > 40 {
			t.Errorf("line of %d columns, want at most 40: %q", len(l), l)
		}
	}
	if !strings.Contains(got, "  - slow-informer stopped reading its\n    watch") {
		t.Errorf("advice not wrapped with a hanging indent:\n%s", got)
	}
	if plain := (Style{}).apply(text); plain != text {
		t.Errorf("the zero style changed the text:\n%q", plain)
	}
}
