// Package live reads a cluster's API servers: Run discovers the instances
// (internal/live/discovery), takes each sample's cheap look, decides a
// goroutine dump within the harm budget (internal/live/harm) or an
// execution trace (internal/live/tracefetch), and hands every response to
// a Target. It is the top room of internal/live: it composes the rooms
// below it, which share the types of internal/live/model and import
// neither each other nor this package (docs/architecture.md, "The rooms
// of internal/live").
package live
