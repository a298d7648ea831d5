package replay_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/replay"
)

// A client asks for the initial events of 500 pods and reads one: the
// unpatched cache keeps its goroutine blocked to the end, the patched one
// stops it 30 s after its last successful send.
func Example() {
	sc, err := replay.Parse(strings.NewReader(`
name: one-stuck-client
duration: 5m
resources:
- name: pods
  objects:
  - {namespace: rand2, count: 500, bytes: 20Ki}
clients:
- name: slow-informer
  model: stops-after 1
  namespace: rand2
`))
	if err != nil {
		panic(err)
	}
	res, err := replay.Run(context.Background(), sc, replay.DefaultBackends(sc, nil), replay.Options{})
	if err != nil {
		panic(err)
	}
	for _, col := range res.Columns {
		c := col.Clients[0]
		fmt.Printf("%s: %s", col.Name, c.Outcome)
		if c.StoppedAfterSeconds != nil {
			fmt.Printf(" after %gs", *c.StoppedAfterSeconds)
		}
		fmt.Printf(", %d goroutine(s) blocked at the end\n", col.BlockedGoroutines)
	}
	fmt.Println(res.Verdict.Summary)
	// Output:
	// unpatched: blocked, 1 goroutine(s) blocked at the end
	// pr141899: stopped after 30s, 0 goroutine(s) blocked at the end
	// complete: stopped after 30s, 0 goroutine(s) blocked at the end
	// the stall timeout stops the watcher of 1 stuck watch (0 blocked goroutines left, 1 unpatched); pr141899 leaves 1 handler blocked writing and 300 APF seat-seconds held (300 unpatched), telling no client; complete frees 1 handler (30 APF seat-seconds) and tells 1 client; the stall timeout cuts no client that completes without it
}
