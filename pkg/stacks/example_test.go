package stacks_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/watch-doctor/watch-doctor/pkg/stacks"
)

// exampleDump is a debug=2 dump of three goroutines as kube-apiserver
// prints them at /debug/pprof/goroutine?debug=2.
const exampleDump = `goroutine 33988 [select, 2 minutes]:
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent(0x24b5d9022270, 0x24b5dce786e0)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:441 +0x107
k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval(0x24b5d9022270, {0x47505d8, 0x24b5dfff7380}, 0x24b5ddc0fba0, 0x0)
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:502 +0x145
created by k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch in goroutine 33855
	k8s.io/apiserver@v0.37.2/pkg/storage/cacher/cacher.go:688 +0x13e5

goroutine 33987 [chan receive, 2 minutes]:
k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait(0x24b5de2fc5b0?)
	k8s.io/apiserver@v0.37.2/pkg/util/flowcontrol/apf_context.go:92 +0x19
created by k8s.io/apiserver/pkg/server/filters.(*priorityAndFairnessHandler).Handle in goroutine 33855
	k8s.io/apiserver@v0.37.2/pkg/server/filters/priority-and-fairness.go:123 +0x2f5

goroutine 91 [IO wait]:
internal/poll.runtime_pollWait(0x7f7c5b0b1e00, 0x72)
	runtime/netpoll.go:351 +0x85
created by net/http.(*Server).Serve in goroutine 1
	net/http/server.go:3454 +0x485
`

func ExampleScanner() {
	sc := stacks.NewScanner(strings.NewReader(exampleDump))
	sc.SkipArgs = true // the diagnosis needs no argument words
	for sc.Next() {
		g := sc.Goroutine() // valid until the next call to Next
		fmt.Printf("goroutine %d [%s, %d minutes] in %s, parent %d\n", g.ID, g.State, g.WaitMinutes, stacks.TopFunc(g.Frames), g.ParentID)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	st := sc.Stats()
	fmt.Printf("%d goroutines in %d lines, %d skipped, parent ids: %v\n", st.Goroutines, st.Lines, st.SkippedLines, st.HasParentIDs())
	// Output:
	// goroutine 33988 [select, 2 minutes] in k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent, parent 33855
	// goroutine 33987 [chan receive, 2 minutes] in k8s.io/apiserver/pkg/util/flowcontrol.(*initializationSignal).Wait, parent 33855
	// goroutine 91 [IO wait, 0 minutes] in internal/poll.runtime_pollWait, parent 1
	// 3 goroutines in 19 lines, 0 skipped, parent ids: true
}

func ExampleParseDebug1() {
	const dump = "goroutine profile: total 3\n" +
		"2 @ 0x49014e 0x46c165 0x2745667 0x274628b 0x497fa1\n" +
		"#\t0x2745666\tk8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent+0x106\tk8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:441\n" +
		"#\t0x274628a\tk8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).processInterval+0x144\tk8s.io/apiserver@v0.37.2/pkg/storage/cacher/cache_watcher.go:502\n" +
		"\n" +
		"1 @ 0x49014e 0x4ccb1a 0x497fa1\n" +
		"# labels: {\"user\":\"admin\"}\n" +
		"#\t0x4ccb19\tcontext.(*cancelCtx).propagateCancel.func2+0x99\tcontext/context.go:523\n" +
		"\n"
	a, err := stacks.ParseDebug1(strings.NewReader(dump))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("total", a.Total)
	for _, s := range a.Stacks {
		fmt.Println(s.Count, stacks.TopFunc(s.Frames), s.Labels)
	}
	// Output:
	// total 3
	// 2 k8s.io/apiserver/pkg/storage/cacher.(*cacheWatcher).sendWatchCacheEvent map[]
	// 1 context.(*cancelCtx).propagateCancel.func2 map[user:admin]
}
