package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/watch-doctor/watch-doctor/internal/bounded"
	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// Memory a replay needs, measured with `replay --columns C` on scenarios of
// 50k and 100k objects (peak RSS, /usr/bin/time): the objects' declared
// sizes hardly matter (their payloads are synthetic); their count does.
const (
	replayBaseBytes = 64 << 20
	// replayObjectBytes is the cost of one object in each column:
	// k8s.io/apiserver's cacher over MemStore keeps the object, its watch
	// cache entry and the store's history (3.6 KiB measured); our model
	// keeps less (0.6 KiB measured).
	replayUpstreamObjectBytes = 4 << 10
	replayOursObjectBytes     = 1 << 10
	// replayClientBytes covers a client's watcher, buffers and model.
	replayClientBytes = 64 << 10
	// defaultReplayMaxMemory leaves room on a laptop or a CI runner.
	defaultReplayMaxMemory = "4Gi"
)

// Memory per update, measured as the constants above (100 objects, 1000
// updates/s for 1m and 10m, peak RSS less the same scenario without
// updates): every update is a new object version each column keeps.
// Upstream's store and watch cache keep the version and its event (3.3
// KiB measured); our model keeps its resource version and object (75 to
// 230 B measured).
const (
	replayUpstreamUpdateBytes = 4 << 10
	replayOursUpdateBytes     = 256
)

// replayMemoryEstimate is the peak memory a replay of sc in columns is
// expected to take, and how it was counted.
func replayMemoryEstimate(sc *replay.Scenario, columns map[string]bool) (int64, string) {
	objects, clients, updates := int64(0), int64(0), sc.UpdateCount()
	for _, r := range sc.Resources {
		for _, g := range r.Objects {
			objects += int64(g.Count)
		}
	}
	for _, c := range sc.Clients {
		clients += int64(max(c.Count, 1))
	}
	est := int64(replayBaseBytes)
	var parts []string
	names := make([]string, 0, len(columns))
	for c := range columns {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		per, perUpdate := int64(replayOursObjectBytes), int64(replayOursUpdateBytes)
		if c == api.ColumnUpstream {
			per, perUpdate = replayUpstreamObjectBytes, replayUpstreamUpdateBytes
		}
		est += objects*per + clients*replayClientBytes + updates*perUpdate
		part := fmt.Sprintf("%s ~%s per object", c, bytesText(per))
		if updates > 0 {
			part += fmt.Sprintf(" and ~%s per update", bounded.Bytes(perUpdate))
		}
		parts = append(parts, part)
	}
	how := fmt.Sprintf("%d objects, %d clients", objects, clients)
	if updates > 0 {
		how += fmt.Sprintf(", %d updates", updates)
	}
	return est, how + "; " + strings.Join(parts, ", ")
}

// checkReplayMemory refuses a replay expected to exceed limit, before it
// runs, saying the estimate, the limit and what to change.
func checkReplayMemory(progress io.Writer, sc *replay.Scenario, columns map[string]bool, limit string) error {
	q, err := resource.ParseQuantity(limit)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("invalid --max-memory %q: use a quantity like 4Gi or 512Mi", limit)
	}
	est, how := replayMemoryEstimate(sc, columns)
	if est > q.Value() {
		hint := "lower the object count"
		if sc.UpdateCount() > 0 {
			hint = "lower the object count or the updates' perSecond (or bound them with from and until)"
		}
		if columns[api.ColumnUpstream] {
			hint = "drop the upstream column (--columns unpatched,pr141899,complete), " + hint
		}
		return fmt.Errorf("scenario %q would need about %s of memory (%s), above --max-memory %s: %s, or raise --max-memory", sc.Name, bytesText(est), how, limit, hint)
	}
	if progress != nil {
		fmt.Fprintf(progress, "replay %s: about %s of memory expected (%s; --max-memory %s)\n", sc.Name, bytesText(est), how, limit)
	}
	return nil
}

func bytesText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
}

// maxReportBytes bounds an analyze -o json report read by replay --from:
// a finding is about 3 KiB (measured on testdata t2), so room for 20,000.
const maxReportBytes = 64 << 20

// reportIn returns the analyze -o json report at the top of dir, if one
// is there. Files are opened by the rules analyze walks by
// (bundle.OpenIn: regular files, links to regular files inside dir; the
// rest is skipped with a warning naming it), and read only when they
// start like JSON, bounded: a larger one is an error naming it.
func reportIn(dir string, progress io.Writer) (*api.Report, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("reading --from %q: %w", dir, unwrapPathError(err))
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("reading --from %q: %w", dir, unwrapPathError(err))
	}
	var found *api.Report
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		shown := filepath.Join(dir, e.Name())
		f, skip, err := bundle.OpenIn(root, filepath.Join(root, e.Name()), e)
		if err != nil {
			return nil, err
		}
		if skip != "" {
			fmt.Fprintf(progress, "replay --from %s: skipped %s: %s\n", dir, report.Escape(shown), skip)
			continue
		}
		r, err := readReport(f, shown)
		f.Close()
		if err != nil {
			return nil, err
		}
		if r != nil {
			found = r
		}
	}
	return found, nil
}

// readReport reads f as an analyze -o json report, when it starts like
// one; nil when it does not.
func readReport(f io.Reader, name string) (*api.Report, error) {
	br := bufio.NewReader(f)
	head, _ := br.Peek(512)
	if !bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) {
		return nil, nil
	}
	data, err := bounded.ReadAll(br, maxReportBytes, name, "an analyze -o json report")
	if err != nil {
		return nil, fmt.Errorf("reading --from: %w", err)
	}
	var r api.Report
	if json.Unmarshal(data, &r) != nil || r.Kind != api.KindReport {
		return nil, nil
	}
	return &r, nil
}
