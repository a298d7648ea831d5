package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/watch-doctor/watch-doctor/internal/replay"
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

// replayMemoryEstimate is the peak memory a replay of sc in columns is
// expected to take, and how it was counted.
func replayMemoryEstimate(sc *replay.Scenario, columns map[string]bool) (int64, string) {
	objects, clients := int64(0), int64(0)
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
		per := int64(replayOursObjectBytes)
		if c == api.ColumnUpstream {
			per = replayUpstreamObjectBytes
		}
		est += objects*per + clients*replayClientBytes
		parts = append(parts, fmt.Sprintf("%s ~%s per object", c, bytesText(per)))
	}
	return est, fmt.Sprintf("%d objects, %d clients; %s", objects, clients, strings.Join(parts, ", "))
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
		if columns[api.ColumnUpstream] {
			hint = "drop the upstream column (--columns unpatched,patched), " + hint
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
