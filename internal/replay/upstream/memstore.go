package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
)

// MemStore is an in-memory storage.Interface with etcd's revision model:
// one revision counter for every write, each key remembering the revision
// that created and last modified it, a log of every change for reads at a
// past revision and for watches from one, and compaction. It stores
// objects encoded with a codec, as the etcd3 store does, so reads return
// fresh copies and a no-op update is recognised by its bytes.
//
// It implements what k8s.io/apiserver's cacher uses (GetList with paging,
// Watch from a resource version with progress notifications,
// GetCurrentResourceVersion, RequestWatchProgress, CompactRevision) and
// what upstream's storage behaviour tests need to set themselves up
// (Create, Get, GuaranteedUpdate, Delete); memstore_test.go and, for the
// watch cases, memwatch_test.go run those tests
// (k8s.io/apiserver/pkg/storage/testing) against it. TTLs and transformers
// are not modelled.
//
// Safe for concurrent use: mu guards everything but the watchers' queues,
// which each watcher guards itself.
type MemStore struct {
	// ProgressNotifyInterval, when set, makes watches that asked for
	// progress notifications get a bookmark at the current revision after
	// that much wall time without events, as etcd does (its default is 10
	// minutes). A replay leaves it 0: its progress must not depend on the
	// wall clock.
	ProgressNotifyInterval time.Duration

	codec          runtime.Codec
	versioner      storage.Versioner
	newFunc        func() runtime.Object
	newListFunc    func() runtime.Object
	resourcePrefix string

	mu        sync.Mutex
	rev       int64
	compacted int64
	kvs       map[string]*kv
	log       []change
	watchers  map[*memWatch]struct{}
}

// kv is one key's value; immutable once stored (MemStore.mu guards the map
// that holds it).
type kv struct {
	data      []byte
	createRev int64
	modRev    int64
}

// change is one write, as etcd's watch reports it (with the previous
// value). Immutable.
type change struct {
	key       string
	rev       int64
	data      []byte // nil for a delete
	createRev int64
	prev      *kv
}

var _ storage.Interface = &MemStore{}

// NewMemStore returns an empty store for objects under resourcePrefix
// ("/pods"), whose next write gets revision firstRev.
func NewMemStore(codec runtime.Codec, newFunc, newListFunc func() runtime.Object, resourcePrefix string, firstRev int64) *MemStore {
	return &MemStore{
		codec:          codec,
		versioner:      storage.APIObjectVersioner{},
		newFunc:        newFunc,
		newListFunc:    newListFunc,
		resourcePrefix: resourcePrefix,
		rev:            firstRev - 1,
		kvs:            map[string]*kv{},
		watchers:       map[*memWatch]struct{}{},
	}
}

// IsWatchListSemanticsUnSupported tells the cacher's reflector to list and
// then watch, as it does against etcd
// (k8s.io/client-go/util/watchlist.DoesClientNotSupportWatchListSemantics).
func (s *MemStore) IsWatchListSemanticsUnSupported() bool { return true }

// Versioner implements storage.Interface.
func (s *MemStore) Versioner() storage.Versioner { return s.versioner }

func (s *MemStore) prepareKey(key string, recursive bool) (string, error) {
	return storage.PrepareKey(s.resourcePrefix, key, recursive)
}

func (s *MemStore) decode(data []byte, into runtime.Object, rev int64) error {
	if _, _, err := s.codec.Decode(data, nil, into); err != nil {
		return err
	}
	return s.versioner.UpdateObject(into, uint64(rev))
}

func (s *MemStore) decodeNew(data []byte, rev int64) (runtime.Object, error) {
	obj := s.newFunc()
	if err := s.decode(data, obj, rev); err != nil {
		return nil, err
	}
	return obj, nil
}

// Create implements storage.Interface.
func (s *MemStore) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	if v, err := s.versioner.ObjectResourceVersion(obj); err == nil && v != 0 {
		return storage.ErrResourceVersionSetOnCreate
	}
	if err := s.versioner.PrepareObjectForStorage(obj); err != nil {
		return fmt.Errorf("preparing the object: %w", err)
	}
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.kvs[key]; exists {
		return storage.NewKeyExistsError(key, 0)
	}
	rev := s.putLocked(key, data, nil)
	if out != nil {
		return s.decode(data, out, rev)
	}
	return nil
}

// putLocked writes data at a new revision and notifies watchers.
func (s *MemStore) putLocked(key string, data []byte, prev *kv) int64 {
	s.rev++
	createRev := s.rev
	if prev != nil {
		createRev = prev.createRev
	}
	s.kvs[key] = &kv{data: data, createRev: createRev, modRev: s.rev}
	s.recordLocked(change{key: key, rev: s.rev, data: data, createRev: createRev, prev: prev})
	return s.rev
}

func (s *MemStore) deleteLocked(key string, prev *kv) int64 {
	s.rev++
	delete(s.kvs, key)
	s.recordLocked(change{key: key, rev: s.rev, prev: prev})
	return s.rev
}

func (s *MemStore) recordLocked(c change) {
	s.log = append(s.log, c)
	for w := range s.watchers {
		w.offer(c)
	}
}

// Stats implements storage.Interface.
func (s *MemStore) Stats(ctx context.Context) (storage.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := storage.Stats{ObjectCount: int64(len(s.kvs))}
	if n := len(s.kvs); n > 0 {
		var total int64
		for _, e := range s.kvs {
			total += int64(len(e.data))
		}
		st.EstimatedAverageObjectSizeBytes = total / int64(n)
	}
	return st, nil
}

// ReadinessCheck implements storage.Interface.
func (s *MemStore) ReadinessCheck() error { return nil }

// GetCurrentResourceVersion implements storage.Interface.
func (s *MemStore) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return uint64(s.rev), nil
}

// EnableResourceSizeEstimation implements storage.Interface.
func (s *MemStore) EnableResourceSizeEstimation(storage.KeysFunc) error { return nil }

// CompactRevision implements storage.Interface.
func (s *MemStore) CompactRevision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compacted
}

// Compact marks the history up to rev compacted: reads and watches from
// before it fail as they do on a compacted etcd. The entries stay in the
// log (the replay never compacts; upstream's storage tests do).
func (s *MemStore) Compact(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rev > s.compacted {
		s.compacted = rev
	}
}

// RequestWatchProgress implements storage.Interface: every watch that asked
// for progress notifications gets a bookmark at the current revision.
func (s *MemStore) RequestWatchProgress(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		if w.progressNotify {
			w.enqueue(w.bookmark(s.rev, false))
		}
	}
	return nil
}

// IncreaseRV writes a key outside the resource prefix, as upstream's tests
// do against etcd to move the revision on.
func (s *MemStore) IncreaseRV() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	return s.rev
}

// Watch implements storage.Interface with etcd3's semantics
// (etcd3/watcher.go:128-215): resource version 0 with sendInitialEvents
// unset, or sendInitialEvents=true, starts with the current state as ADDED
// events (then an initial-events-end bookmark if bookmarks are allowed);
// sendInitialEvents=false starts at the current revision; a resource
// version N streams the changes after N, or an error if N was compacted.
func (s *MemStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	key, err := s.prepareKey(key, opts.Recursive)
	if err != nil {
		return nil, err
	}
	rev, err := s.versioner.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	pred := opts.Predicate
	if pred.Empty() {
		pred = storage.Everything
	}
	wctx, cancel := context.WithCancel(ctx)
	w := &memWatch{
		store:          s,
		ctx:            wctx,
		cancel:         cancel,
		key:            key,
		recursive:      opts.Recursive,
		pred:           pred,
		progressNotify: opts.ProgressNotify,
		result:         make(chan watch.Event, 100),
		notify:         make(chan struct{}, 1),
	}
	initial := (opts.SendInitialEvents == nil && rev == 0) || (opts.SendInitialEvents != nil && *opts.SendInitialEvents)
	endBookmark := opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.Predicate.AllowWatchBookmarks

	s.mu.Lock()
	switch {
	case rev > uint64(s.rev) && initial:
		w.enqueue(errorEvent(storage.NewTooLargeResourceVersionError(rev, uint64(s.rev), 1)))
	case initial:
		keys, state, _ := s.stateLocked(0, key, opts.Recursive, "")
		for _, k := range keys {
			e := state[k]
			if ev := w.transform(change{key: k, rev: e.modRev, data: e.data, createRev: e.modRev}); ev != nil {
				w.enqueue(*ev)
			}
		}
		if endBookmark {
			w.enqueue(w.bookmark(s.rev, true))
		}
		w.startRev = s.rev
		s.watchers[w] = struct{}{}
	case rev == 0:
		w.startRev = s.rev
		s.watchers[w] = struct{}{}
	case int64(rev) < s.compacted:
		// The 410 a watch client reads, deliberately in etcd3's words.
		w.enqueue(errorEvent(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, s.compacted))))
	default:
		w.startRev = int64(rev)
		for _, c := range s.log {
			w.offer(c)
		}
		s.watchers[w] = struct{}{}
	}
	s.mu.Unlock()
	go w.run()
	return w, nil
}

func errorEvent(err error) watch.Event {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		return watch.Event{Type: watch.Error, Object: &st}
	}
	st := apierrors.NewInternalError(err).Status()
	return watch.Event{Type: watch.Error, Object: &st}
}
