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

	// budgetRefillRatio is the budget gained per unit of elapsed time.
	budgetRefillRatio = float64(budgetRefreshPerSecond) / float64(time.Second)
)

// timeBudget is the time the dispatcher may spend blocked on slow watchers,
// shared by all of them (upstream timeBudgetImpl, time_budget.go:50-102):
//
//	timeout := b.takeAvailable() // everything accumulated, budget now 0
//	... wait at most timeout ...
//	b.returnUnused(timeout - spent)
//
// It runs on the Cacher's budget clock (Config.BudgetClock): the real clock
// by default, as upstream's; a replay gives it a fake clock of its own, so
// that waiting out the budget neither takes wall time nor moves the clock
// every other timer of the cache runs on.
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
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.budget = min(b.budget+time.Duration(float64(elapsed)*budgetRefillRatio), budgetMax)
	}
	b.last = now
	out := b.budget
	b.budget = 0
	return out
}

// returnUnused gives back what the caller did not spend; an overdraft
// (unused < 0) is forgiven, not charged.
func (b *timeBudget) returnUnused(unused time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.budget = min(b.budget+max(unused, 0), budgetMax)
}
