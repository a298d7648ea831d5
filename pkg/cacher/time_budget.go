package cacher

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// The dispatcher's budget for waiting on blocked watchers (upstream
// time_budget.go:26-29): it refills by 50 ms per second of clock time and
// holds at most 100 ms.
const (
	budgetRefreshPerSecond = 50 * time.Millisecond
	budgetMax              = 100 * time.Millisecond
)

// timeBudget is the time the dispatcher may spend blocked on slow watchers,
// shared by all of them (upstream timeBudgetImpl, time_budget.go:50-102):
//
//	timeout := b.takeAvailable() // everything accumulated, budget now 0
//	... wait at most timeout ...
//	b.returnUnused(timeout - spent)
//
// Upstream measures it on the real clock; here it runs on the injected
// clock, so a replay spends virtual milliseconds, not wall ones.
//
// Safe for concurrent use.
type timeBudget struct {
	mu     sync.Mutex
	clock  clock.PassiveClock
	budget time.Duration
	last   time.Time
}

func newTimeBudget(c clock.PassiveClock) *timeBudget {
	return &timeBudget{clock: c, last: c.Now()}
}

// takeAvailable returns the whole accumulated budget and empties it.
func (b *timeBudget) takeAvailable() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	acc := max(now.Sub(b.last).Seconds()*budgetRefreshPerSecond.Seconds(), 0)
	b.budget = min(b.budget+time.Duration(acc*1e9), budgetMax)
	b.last = now
	out := b.budget
	b.budget = 0
	return out
}

// returnUnused gives back what the caller did not spend.
func (b *timeBudget) returnUnused(unused time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if unused < 0 {
		return
	}
	b.budget = min(b.budget+unused, budgetMax)
}
