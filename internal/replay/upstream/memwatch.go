package upstream

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"
)

// memWatch is one watch on a MemStore: changes are converted and queued
// under the store's lock, without blocking the writer, and a goroutine
// hands them to the result channel (100 slots, as etcd3's watchChan).
//
// Safe for concurrent use: mu guards queue.
type memWatch struct {
	store          *MemStore
	ctx            context.Context
	cancel         context.CancelFunc
	key            string
	recursive      bool
	pred           storage.SelectionPredicate
	progressNotify bool
	// startRev: changes at or before it are not this watch's business.
	startRev int64

	mu     sync.Mutex
	queue  []watch.Event
	notify chan struct{}
	result chan watch.Event
}

// ResultChan implements watch.Interface.
func (w *memWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface.
func (w *memWatch) Stop() { w.cancel() }

func (w *memWatch) enqueue(ev watch.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// offer queues what change c means to this watch, if anything; the
// store's lock is held.
func (w *memWatch) offer(c change) {
	if c.rev <= w.startRev {
		return
	}
	if ev := w.transform(c); ev != nil {
		w.enqueue(*ev)
	}
}

func (w *memWatch) matchesKey(key string) bool {
	if w.recursive {
		return strings.HasPrefix(key, w.key)
	}
	return key == w.key
}

func (w *memWatch) filter(obj runtime.Object) bool {
	ok, err := w.pred.Matches(obj)
	return err == nil && ok
}

// transform turns a change into an event as etcd3's watchChan.transform
// does: created and passing -> ADDED; deleted and the old object passing ->
// DELETED with the old object at the deletion's revision; otherwise
// MODIFIED, or ADDED/DELETED when the update moves the object into or out of
// the predicate.
func (w *memWatch) transform(c change) *watch.Event {
	if !w.matchesKey(c.key) {
		return nil
	}
	s := w.store
	var cur, old runtime.Object
	var err error
	if c.data != nil {
		if cur, err = s.decodeNew(c.data, c.rev); err != nil {
			klog.ErrorS(err, "decoding a stored object", "key", c.key)
			return nil
		}
	}
	if c.prev != nil {
		// The previous object at the change's revision, as etcd3's
		// prepareObjs decodes it.
		if old, err = s.decodeNew(c.prev.data, c.rev); err != nil {
			klog.ErrorS(err, "decoding a stored object", "key", c.key)
			return nil
		}
	}
	switch {
	case c.data == nil:
		if old == nil || !w.filter(old) {
			return nil
		}
		return &watch.Event{Type: watch.Deleted, Object: old}
	case c.prev == nil || c.createRev == c.rev:
		if !w.filter(cur) {
			return nil
		}
		return &watch.Event{Type: watch.Added, Object: cur}
	}
	curOK, oldOK := w.filter(cur), w.filter(old)
	switch {
	case curOK && oldOK:
		return &watch.Event{Type: watch.Modified, Object: cur}
	case curOK:
		return &watch.Event{Type: watch.Added, Object: cur}
	case oldOK:
		return &watch.Event{Type: watch.Deleted, Object: old}
	}
	return nil
}

func (w *memWatch) bookmark(rev int64, initialEventsEnd bool) watch.Event {
	obj := w.store.newFunc()
	if err := w.store.versioner.UpdateObject(obj, uint64(rev)); err != nil {
		klog.ErrorS(err, "setting a bookmark's resource version")
	}
	if initialEventsEnd {
		if err := storage.AnnotateInitialEventsEndBookmark(obj); err != nil {
			klog.ErrorS(err, "annotating the initial-events-end bookmark")
		}
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// run hands queued events to the result channel until the watch stops.
func (w *memWatch) run() {
	defer func() {
		w.store.mu.Lock()
		delete(w.store.watchers, w)
		w.store.mu.Unlock()
		close(w.result)
	}()
	var tick <-chan time.Time
	if w.progressNotify && w.store.ProgressNotifyInterval > 0 {
		t := time.NewTicker(w.store.ProgressNotifyInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		w.mu.Lock()
		var ev watch.Event
		have := len(w.queue) > 0
		if have {
			ev = w.queue[0]
			w.queue[0] = watch.Event{}
			w.queue = w.queue[1:]
		}
		w.mu.Unlock()
		if !have {
			select {
			case <-w.notify:
				continue
			case <-tick:
				w.store.mu.Lock()
				rev := w.store.rev
				w.store.mu.Unlock()
				ev = w.bookmark(rev, false)
			case <-w.ctx.Done():
				return
			}
		}
		select {
		case w.result <- ev:
		case <-w.ctx.Done():
			return
		}
		if ev.Type == watch.Error {
			return
		}
	}
}
