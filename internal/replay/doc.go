// Package replay replays watch clients in virtual time against watch
// caches side by side, to see what the stall timeout of kubernetes PR
// 141899 would do, one Backend per column: k8s.io/apiserver's cacher
// (upstream, internal/replay/upstream), internal/cacher unpatched
// (NewOurs with no timeout), with the PR's stall timeout (pr141899) and
// with the complete fix (NewOursComplete), which also ends the response.
//
// A Scenario (YAML, docs/scenario.schema.json) gives the objects of each
// resource, their update streams and the clients: a read model (healthy,
// paced R/s, stops-after N, stops-after initial-events, disconnects-after
// T), a watch request (scope, sendInitialEvents or legacy
// resourceVersion=0, bookmarks) and a transport (a measured profile: go,
// nghttp2, http1, half-window; or its window and refresh policy). A
// client that relists watches again from scratch once the server ended its
// watch and it read to that end, as client-go's reflector does (relist.go):
// the loop that follows a closure, each return a new initial replay.
//
// Run drives every backend the same way, one tick at a time:
//
//	clients connect or leave ─► clients read ─► for each of the tick's
//	updates: the update, then clients read ─► observe ─► the fake clock
//	steps to the next tick
//
// where "clients read" goes in rounds: each read returns credit (HTTP/2
// flow control, or the socket buffers of an http1 client), the handler
// writes more, the watcher sends more, until no read returns any. Between
// steps it waits until every goroutine involved is parked (see
// Backend.Settle), so that a replay is deterministic. Each client is served
// by a handler goroutine (handler.go), the replay's WatchServer: it opens the
// watch, so the watcher goroutine is its child in a goroutine dump, takes
// one event at a time from the result channel and writes it into a stream
// (transport.go) that models the flow-control window, the client's refresh
// policy and its decoder, blocking while the window is closed. At the end a
// goroutine dump of the process, read with pkg/stacks and internal/watches, says
// which watcher goroutines are left blocked.
package replay
