package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/conversion"
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
// (Create, Get, GuaranteedUpdate, Delete); memstore_test.go runs those
// tests (k8s.io/apiserver/pkg/storage/testing) against it. TTLs and
// transformers are not modelled.
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
		return fmt.Errorf("PrepareObjectForStorage failed: %w", err)
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

// Get implements storage.Interface.
func (s *MemStore) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	cur, rev := s.kvs[key], s.rev
	s.mu.Unlock()
	if err := s.validateMinimumResourceVersion(opts.ResourceVersion, uint64(rev)); err != nil {
		return err
	}
	if cur == nil {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(out)
		}
		return storage.NewKeyNotFoundError(key, rev)
	}
	return s.decode(cur.data, out, cur.modRev)
}

func (s *MemStore) validateMinimumResourceVersion(min string, actual uint64) error {
	if min == "" {
		return nil
	}
	v, err := s.versioner.ParseResourceVersion(min)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
	}
	if v > actual {
		return storage.NewTooLargeResourceVersionError(v, actual, 0)
	}
	return nil
}

// stateLocked returns the keys with their values at rev (the current state
// for rev 0), sorted, starting at from, within prefix (or exactly key when
// not recursive).
func (s *MemStore) stateLocked(rev int64, key string, recursive bool, from string) ([]string, map[string]*kv, error) {
	state := s.kvs
	if rev != 0 && rev != s.rev {
		if rev > s.rev {
			return nil, nil, storage.NewTooLargeResourceVersionError(uint64(rev), uint64(s.rev), 0)
		}
		if rev < s.compacted {
			return nil, nil, errCompacted
		}
		state = map[string]*kv{}
		for _, c := range s.log {
			if c.rev > rev {
				break
			}
			if c.data == nil {
				delete(state, c.key)
			} else {
				state[c.key] = &kv{data: c.data, createRev: c.createRev, modRev: c.rev}
			}
		}
	}
	var keys []string
	for k := range state {
		if recursive {
			if strings.HasPrefix(k, key) && k >= from {
				keys = append(keys, k)
			}
		} else if k == key {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, state, nil
}

var errCompacted = errors.New("mvcc: required revision has been compacted")

// GetList implements storage.Interface, paging as the etcd3 store does
// (etcd3/store.go GetList, pagedChunks): limit keys per read, doubling,
// until enough items match.
func (s *MemStore) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	keyPrefix, err := s.prepareKey(key, opts.Recursive)
	if err != nil {
		return err
	}
	listPtr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return err
	}
	v, err := conversion.EnforcePtr(listPtr)
	if err != nil || v.Kind() != reflect.Slice {
		return fmt.Errorf("need ptr to slice: %v", err)
	}
	withRev, continueKey, err := storage.ValidateListOptions(keyPrefix, s.versioner, opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	current := s.rev
	keys, state, err := s.stateLocked(withRev, keyPrefix, opts.Recursive, continueKey)
	s.mu.Unlock()
	if err != nil {
		if errors.Is(err, errCompacted) {
			if len(opts.Predicate.Continue) > 0 {
				tok, terr := storage.EncodeContinue(continueKey, keyPrefix, -1)
				if terr != nil {
					return apierrors.NewResourceExpired("the provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
				}
				se := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
				se.ErrStatus.ListMeta.Continue = tok
				return se
			}
			return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
		}
		return err
	}
	if withRev == 0 {
		if err := s.validateMinimumResourceVersion(opts.ResourceVersion, uint64(current)); err != nil {
			return err
		}
		withRev = current
	}
	elem := v.Type().Elem()
	newItem := func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
	paging := opts.Predicate.Limit > 0
	var lastKey string
	hasMore := false
	for i, k := range keys {
		if paging && int64(v.Len()) >= opts.Predicate.Limit {
			hasMore = true
			break
		}
		lastKey = k
		e := state[k]
		obj := newItem()
		if err := s.decode(e.data, obj, e.modRev); err != nil {
			return err
		}
		if ok, err := opts.Predicate.Matches(obj); err == nil && ok {
			v.Set(reflect.Append(v, reflect.ValueOf(obj).Elem()))
		}
		_ = i
	}
	count := int64(len(keys))
	cont, remaining, err := storage.PrepareContinueToken(lastKey, keyPrefix, withRev, count, hasMore, opts)
	if err != nil {
		return err
	}
	if v.IsNil() {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	return s.versioner.UpdateList(listObj, uint64(withRev), cont, remaining)
}

// state is one key's value as read for an update or a delete, owned by
// the call that read it.
type state struct {
	obj   runtime.Object
	data  []byte
	rev   int64
	meta  storage.ResponseMeta
	stale bool
}

func (s *MemStore) currentState(key string, ignoreNotFound bool) (*state, error) {
	s.mu.Lock()
	cur := s.kvs[key]
	s.mu.Unlock()
	if cur == nil {
		if !ignoreNotFound {
			return nil, storage.NewKeyNotFoundError(key, 0)
		}
		obj := s.newFunc()
		return &state{obj: obj}, nil
	}
	obj, err := s.decodeNew(cur.data, cur.modRev)
	if err != nil {
		return nil, err
	}
	return &state{obj: obj, data: cur.data, rev: cur.modRev, meta: storage.ResponseMeta{ResourceVersion: uint64(cur.modRev)}}, nil
}

func (s *MemStore) stateFromObject(obj runtime.Object) (*state, error) {
	rv, err := s.versioner.ObjectResourceVersion(obj)
	if err != nil {
		return nil, fmt.Errorf("couldn't get resource version: %w", err)
	}
	st := &state{obj: obj.DeepCopyObject(), rev: int64(rv), meta: storage.ResponseMeta{ResourceVersion: rv}}
	if err := s.versioner.PrepareObjectForStorage(st.obj); err != nil {
		return nil, fmt.Errorf("PrepareObjectForStorage failed: %w", err)
	}
	st.data, err = runtime.Encode(s.codec, st.obj)
	if err != nil {
		return nil, err
	}
	if err := s.versioner.UpdateObject(st.obj, rv); err != nil {
		return nil, err
	}
	st.stale = true
	return st, nil
}

// Delete implements storage.Interface (etcd3 conditionalDelete: retry on a
// stale cached object, optimistic delete at the read revision).
func (s *MemStore) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions, validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	var orig *state
	current := false
	if cachedExistingObject != nil {
		orig, err = s.stateFromObject(cachedExistingObject)
	} else {
		orig, err = s.currentState(key, false)
		current = true
	}
	if err != nil {
		return err
	}
	for {
		if preconditions != nil {
			if err := preconditions.Check(key, orig.obj); err != nil {
				if current {
					return err
				}
				cachedRev := orig.rev
				if orig, err = s.currentState(key, false); err != nil {
					return err
				}
				current = true
				if cachedRev == orig.rev {
					return err
				}
				continue
			}
		}
		if err := validateDeletion(ctx, orig.obj); err != nil {
			if current {
				return err
			}
			cachedRev := orig.rev
			cachedErr := err
			if orig, err = s.currentState(key, false); err != nil {
				return err
			}
			current = true
			if cachedRev == orig.rev {
				return cachedErr
			}
			continue
		}
		s.mu.Lock()
		cur := s.kvs[key]
		if cur == nil || cur.modRev != orig.rev {
			s.mu.Unlock()
			if orig, err = s.currentState(key, false); err != nil {
				return err
			}
			current = true
			continue
		}
		rev := s.deleteLocked(key, cur)
		s.mu.Unlock()
		return s.decode(orig.data, out, rev)
	}
}

// GuaranteedUpdate implements storage.Interface (etcd3 GuaranteedUpdate:
// retry on conflict or on a stale cached object, no write when the update
// changes nothing).
func (s *MemStore) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool, preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	if _, err := conversion.EnforcePtr(destination); err != nil {
		return fmt.Errorf("unable to convert output object to pointer: %v", err)
	}
	var orig *state
	current := false
	if cachedExistingObject != nil {
		orig, err = s.stateFromObject(cachedExistingObject)
	} else {
		orig, err = s.currentState(key, ignoreNotFound)
		current = true
	}
	if err != nil {
		return err
	}
	for {
		if err := preconditions.Check(key, orig.obj); err != nil {
			if current {
				return err
			}
			if orig, err = s.currentState(key, ignoreNotFound); err != nil {
				return err
			}
			current = true
			continue
		}
		ret, _, err := tryUpdate(orig.obj, orig.meta)
		if err != nil {
			if current {
				return err
			}
			cachedRev, cachedErr := orig.rev, err
			if orig, err = s.currentState(key, ignoreNotFound); err != nil {
				return err
			}
			current = true
			if cachedRev == orig.rev {
				return cachedErr
			}
			continue
		}
		if err := s.versioner.PrepareObjectForStorage(ret); err != nil {
			return fmt.Errorf("PrepareObjectForStorage failed: %w", err)
		}
		data, err := runtime.Encode(s.codec, ret)
		if err != nil {
			return err
		}
		if !orig.stale && orig.data != nil && bytes.Equal(data, orig.data) {
			return s.decode(orig.data, destination, orig.rev)
		}
		if orig.stale && bytes.Equal(data, orig.data) {
			fresh, err := s.currentState(key, ignoreNotFound)
			if err != nil {
				return err
			}
			orig, current = fresh, true
			if bytes.Equal(data, orig.data) {
				return s.decode(orig.data, destination, orig.rev)
			}
			continue
		}
		s.mu.Lock()
		cur := s.kvs[key]
		if (cur == nil && orig.rev != 0) || (cur != nil && cur.modRev != orig.rev) {
			s.mu.Unlock()
			if orig, err = s.currentState(key, ignoreNotFound); err != nil {
				return err
			}
			current = true
			continue
		}
		rev := s.putLocked(key, data, cur)
		s.mu.Unlock()
		return s.decode(data, destination, rev)
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

// Compact forgets the history up to rev: reads and watches from before it
// fail as they do on a compacted etcd.
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
