package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// ExitInterrupted is the exit code after Ctrl-C or SIGTERM, as shells give
// a process killed by SIGINT (128 + 2).
const ExitInterrupted = 130

// notifySignals relays SIGINT and SIGTERM to c; tests replace it.
var notifySignals = func(c chan<- os.Signal) { signal.Notify(c, os.Interrupt, syscall.SIGTERM) }

// interrupted holds the signal that canceled the current command, if any:
// execute turns the command's cancellation error into ExitInterrupted.
var interrupted atomic.Pointer[os.Signal]

// interruptContext is canceled on the first SIGINT or SIGTERM; the signal
// is recorded for execute. The cancel function stops listening.
func interruptContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan os.Signal, 1)
	notifySignals(c)
	go func() {
		select {
		case sig := <-c:
			interrupted.Store(&sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(c)
		cancel()
	}
}

// wasInterrupted reports the signal that stopped the command, or nil.
func wasInterrupted() os.Signal {
	if p := interrupted.Load(); p != nil {
		return *p
	}
	return nil
}
