// Package replay replays watch clients in virtual time against watch
// caches side by side, to see what the stall timeout of kubernetes PR
// 141899 would do: k8s.io/apiserver's cacher (internal/replay/upstream) and
// internal/cacher unpatched and patched, each a Backend.
//
// A Scenario (YAML, docs/scenario.schema.json) gives the objects of each
// resource, their update streams and the clients: a read model (healthy,
// paced R/s, stops-after N, disconnects-after T) and a watch request
// (scope, sendInitialEvents or legacy resourceVersion=0, bookmarks).
//
// Run drives every backend the same way, one tick at a time:
//
//	clients connect or leave ─► clients read ─► for each of the tick's
//	updates: the update, then clients read ─► observe ─► the fake clock
//	steps to the next tick
//
// where "clients read" goes in rounds: each read returns HTTP/2 credit, the
// handler writes more, the watcher sends more, until no read returns any.
//
// and waits between steps until every goroutine involved is parked (see
// Backend.Settle), so that a replay is deterministic. Each client is served
// by a handler goroutine (handler.go), the replay's WatchServer: it opens the
// watch, so the watcher goroutine is its child in a goroutine dump, takes
// one event at a time from the result channel and writes it into a stream
// (transport.go) that models the flow-control window, the client's refresh
// policy and its decoder, blocking while the window is closed. At the end a
// goroutine dump of the process, read with pkg/stacks and internal/watches, says
// which watcher goroutines are left blocked.
package replay
