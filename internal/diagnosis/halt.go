package diagnosis

import "context"

// Stopping a diagnosis: DiagnoseContext takes a context, and every loop
// that can run long (per server, per APF row, per watcher, per matcher
// block) asks done each turn and breaks out when it is. What the steps
// built so far is thrown away: DiagnoseContext returns ctx.Err() and no
// report. A context's error stays set once set, so no later step can miss
// that an earlier one stopped short.

// done reports whether ctx is done; a nil ctx (a step built by a test
// without one) never is.
func done(ctx context.Context) bool { return ctx != nil && ctx.Err() != nil }
