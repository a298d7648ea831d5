package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/report"
)

// loadScenario reads a built-in scenario, or a file when name is a path.
func loadScenario(name string) (*replay.Scenario, error) {
	if st, err := os.Stat(name); err == nil && !st.IsDir() {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("opening scenario: %w", err)
		}
		defer f.Close()
		sc, err := replay.Parse(f)
		if err != nil {
			return nil, fmt.Errorf("scenario file %q: %w", name, err)
		}
		return sc, nil
	}
	return replay.Builtin(name)
}

// scenarioFromDir reads a bundle directory (any layout analyze reads): the
// metrics of its latest capture, and a diagnosis, either an analyze -o json
// report at its top level or one made from its dumps.
func scenarioFromDir(dir string, progress io.Writer) (*replay.Scenario, error) {
	fmt.Fprintf(progress, "replay --from %s: reading the bundle\n", dir)
	ev := replay.Evidence{Name: "from-" + sanitizeName(filepath.Base(filepath.Clean(dir)))}
	r, err := reportIn(dir, progress)
	if err != nil {
		return nil, err
	}
	ev.Report = r
	loaded, err := bundle.Load([]string{dir}, bundle.Options{})
	if err != nil && ev.Report == nil {
		return nil, fmt.Errorf("reading bundle --from %q: %w", dir, err)
	}
	if loaded != nil {
		for _, w := range loaded.Warnings {
			fmt.Fprintf(progress, "replay --from %s: warning: %s\n", dir, report.Escape(w))
		}
		var latest *bundle.Capture
		for _, c := range loaded.Captures {
			if c.MetricsSample != nil && (latest == nil || !c.CapturedAt.Before(latest.CapturedAt)) {
				latest = c
			}
		}
		if latest != nil {
			ev.Metrics = latest.MetricsSample
		}
		if ev.Report == nil {
			fmt.Fprintf(progress, "replay --from %s: diagnosing %d capture(s)\n", dir, len(loaded.Captures))
			res, err := engine.Run(context.Background(), engine.Config{Loaded: loaded, Diagnosis: diagnoseOptions(0)})
			if err != nil {
				return nil, fmt.Errorf("diagnosing bundle --from %q: %w", dir, err)
			}
			ev.Report = res.Report
		}
	}
	sc, err := replay.Derive(ev)
	if err != nil {
		return nil, fmt.Errorf("--from %q: %w", dir, err)
	}
	objects := 0
	for _, r := range sc.Resources {
		for _, g := range r.Objects {
			objects += g.Count
		}
	}
	fmt.Fprintf(progress, "replay --from %s: derived scenario %s: %s virtual, %d objects, %d client group(s)\n", dir, sc.Name, sc.Duration.Duration, objects, len(sc.Clients))
	return sc, nil
}

func sanitizeName(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, s)
	if s = strings.Trim(s, "-."); s == "" {
		s = "bundle"
	}
	return s
}
