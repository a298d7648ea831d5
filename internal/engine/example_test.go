package engine_test

import (
	"context"
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// Two saved captures of one API server, diagnosed as analyze does: one
// call, a finished report.
func ExampleRun() {
	loaded, err := bundle.Load([]string{golden.Fixture("t1"), golden.Fixture("t2")}, bundle.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := engine.Run(context.Background(), engine.Config{Loaded: loaded})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range res.Report.Findings {
		fmt.Println(f.Type, f.ClientLabel())
	}
	// Output:
	// StuckInitialEvents paced-reader | slow-informer
	// SlowInitialEvents paced-reader | slow-informer
}
