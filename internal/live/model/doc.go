// Package model is the floor of internal/live: what its rooms share. The
// run's Config and TraceConfig, an Instance and its InstanceResult, the
// errors a server's answers become, the estimate of a dump's pause, and
// Client, the guarded GET of one instance (bounded answers, no redirect,
// a debug=2 dump only with a permit the dump policy allows). It imports no
// other package of internal/live.
package model
