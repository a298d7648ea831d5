// Package harm is the run's harm budget: the pause a debug=2 goroutine dump
// would cost a server, estimated from the cheap look, and the decision to
// take it or withhold it (budget.go, harm.go); and what the run did cost,
// measured by the server's own stop-the-world histogram (cost.go). It
// imports only internal/live/model of internal/live.
package harm
