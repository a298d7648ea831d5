package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// Get implements storage.Interface.
func (s *MemStore) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	cur, rev := s.kvs[key], s.rev
	s.mu.Unlock()
	if err := s.requireRevision(opts.ResourceVersion, uint64(rev)); err != nil {
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

// requireRevision fails a read whose resourceVersion (a minimum, "" for
// none) is newer than the store's current revision.
func (s *MemStore) requireRevision(min string, actual uint64) error {
	if min == "" {
		return nil
	}
	v, err := s.versioner.ParseResourceVersion(min)
	if err != nil {
		// The 400 a client reads, deliberately in etcd3's words.
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

// errCompacted: a read at a revision the store has compacted away.
var errCompacted = errors.New("revision compacted")

// The messages of the 410 Gone a client gets from a list at a compacted
// revision, deliberately etcd3 store's words: clients, and upstream's
// storage tests, look for them.
const (
	listTooOldMessage                 = "The resourceVersion for the provided list is too old."
	continueTooOldMessage             = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
	continueTooOldInconsistentMessage = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)

// GetList implements storage.Interface: the objects under key at the
// requested revision (the current one by default) that the predicate
// selects, at most Limit of them with a continue token for the rest, as
// the etcd3 store pages them. Keys are read in order; a page ends once it
// holds Limit objects, however many keys the predicate skipped.
func (s *MemStore) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	prefix, err := s.prepareKey(key, opts.Recursive)
	if err != nil {
		return err
	}
	rev, from, err := storage.ValidateListOptions(prefix, s.versioner, opts)
	if err != nil {
		return err
	}
	s.mu.Lock()
	current := s.rev
	keys, state, err := s.stateLocked(rev, prefix, opts.Recursive, from)
	s.mu.Unlock()
	if errors.Is(err, errCompacted) {
		return compactedListError(opts, from, prefix)
	}
	if err != nil {
		return err
	}
	if rev == 0 {
		if err := s.requireRevision(opts.ResourceVersion, uint64(current)); err != nil {
			return err
		}
		rev = current
	}
	page, last, more, err := s.page(keys, state, opts.Predicate)
	if err != nil {
		return err
	}
	if err := meta.SetList(listObj, page); err != nil {
		return fmt.Errorf("filling the list: %w", err)
	}
	token, remaining, err := storage.PrepareContinueToken(last, prefix, rev, int64(len(keys)), more, opts)
	if err != nil {
		return err
	}
	return s.versioner.UpdateList(listObj, uint64(rev), token, remaining)
}

// page decodes the objects of keys (sorted) the predicate selects, up to
// its limit; last is the last key looked at, more whether keys remain
// after it.
func (s *MemStore) page(keys []string, state map[string]*kv, pred storage.SelectionPredicate) (page []runtime.Object, last string, more bool, err error) {
	for _, k := range keys {
		if pred.Limit > 0 && int64(len(page)) == pred.Limit {
			return page, last, true, nil
		}
		last = k
		obj, err := s.decodeNew(state[k].data, state[k].modRev)
		if err != nil {
			return nil, "", false, fmt.Errorf("decoding %s: %w", k, err)
		}
		if ok, err := pred.Matches(obj); err == nil && ok {
			page = append(page, obj)
		}
	}
	return page, last, false, nil
}

// compactedListError is the 410 Gone of a list at a compacted revision:
// for a continuation, with a token that goes on from the same key at the
// current revision when one can be made.
func compactedListError(opts storage.ListOptions, from, prefix string) error {
	if opts.Predicate.Continue == "" {
		return apierrors.NewResourceExpired(listTooOldMessage)
	}
	token, err := storage.EncodeContinue(from, prefix, -1)
	if err != nil {
		return apierrors.NewResourceExpired(continueTooOldMessage)
	}
	gone := apierrors.NewResourceExpired(continueTooOldInconsistentMessage)
	gone.ErrStatus.ListMeta.Continue = token
	return gone
}

// version is one key's value as an update or a delete works on it: the
// stored one, or the caller's cached copy of it, which may be behind.
// Owned by the call.
type version struct {
	obj  runtime.Object
	data []byte
	// rev is the revision that wrote it, 0 for a key that does not exist.
	rev       int64
	fromCache bool
}

func (v *version) responseMeta() storage.ResponseMeta {
	return storage.ResponseMeta{ResourceVersion: uint64(v.rev)}
}

// load reads the stored version of key. A missing key is NotFound, or with
// missingOK an empty object at revision 0.
func (s *MemStore) load(key string, missingOK bool) (*version, error) {
	s.mu.Lock()
	cur := s.kvs[key]
	s.mu.Unlock()
	switch {
	case cur != nil:
		obj, err := s.decodeNew(cur.data, cur.modRev)
		if err != nil {
			return nil, err
		}
		return &version{obj: obj, data: cur.data, rev: cur.modRev}, nil
	case missingOK:
		return &version{obj: s.newFunc()}, nil
	}
	return nil, storage.NewKeyNotFoundError(key, 0)
}

// begin returns the version an update or a delete starts from: the caller's
// cached object if it gave one, encoded as the store would hold it, else
// the stored version.
func (s *MemStore) begin(key string, cached runtime.Object, missingOK bool) (*version, error) {
	if cached == nil {
		return s.load(key, missingOK)
	}
	rv, err := s.versioner.ObjectResourceVersion(cached)
	if err != nil {
		return nil, fmt.Errorf("resource version of the cached object: %w", err)
	}
	obj := cached.DeepCopyObject()
	if err := s.versioner.PrepareObjectForStorage(obj); err != nil {
		return nil, fmt.Errorf("preparing the cached object: %w", err)
	}
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return nil, err
	}
	if err := s.versioner.UpdateObject(obj, rv); err != nil {
		return nil, err
	}
	return &version{obj: obj, data: data, rev: int64(rv), fromCache: true}, nil
}

// recheck handles a check (preconditions, validation, the update itself)
// that failed with err on v. A cached copy may be behind the store: if the
// store holds another revision, the check deserves another go on that,
// which recheck returns. Otherwise the failure stands and recheck returns
// it.
func (s *MemStore) recheck(key string, v *version, missingOK bool, err error) (*version, error) {
	if !v.fromCache {
		return nil, err
	}
	stored, lerr := s.load(key, missingOK)
	if lerr != nil {
		return nil, lerr
	}
	if stored.rev == v.rev {
		return nil, err
	}
	return stored, nil
}

// commitLocked writes data (nil: deletes) at a new revision if the key is
// still at revision expect (0: absent), and returns the new revision.
func (s *MemStore) commitLocked(key string, expect int64, data []byte) (int64, bool) {
	cur := s.kvs[key]
	var at int64
	if cur != nil {
		at = cur.modRev
	}
	switch {
	case at != expect:
		return 0, false
	case data == nil:
		return s.deleteLocked(key, cur), true
	}
	return s.putLocked(key, data, cur), true
}

// Delete implements storage.Interface with optimistic concurrency: the
// preconditions and the validation run on the version the call starts
// from (a cached copy may have to be replaced by the stored version, see
// recheck), and the delete commits only if the key is still at that
// version's revision, else it starts over from the stored version.
func (s *MemStore) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions, validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	v, err := s.begin(key, cachedExistingObject, false)
	for err == nil {
		if cerr := s.checkDelete(ctx, key, v, preconditions, validateDeletion); cerr != nil {
			v, err = s.recheck(key, v, false, cerr)
			continue
		}
		s.mu.Lock()
		rev, ok := s.commitLocked(key, v.rev, nil)
		s.mu.Unlock()
		if ok {
			return s.decode(v.data, out, rev)
		}
		v, err = s.load(key, false)
	}
	return err
}

func (s *MemStore) checkDelete(ctx context.Context, key string, v *version, preconditions *storage.Preconditions, validate storage.ValidateObjectFunc) error {
	if err := preconditions.Check(key, v.obj); err != nil {
		return err
	}
	return validate(ctx, v.obj)
}

// GuaranteedUpdate implements storage.Interface with optimistic
// concurrency: the preconditions and tryUpdate run on the version the call
// starts from (a cached copy may have to be replaced by the stored
// version, see recheck); an update that changes nothing writes nothing
// (a cached copy must be confirmed by the stored version first); a write
// commits only if the key is still at that version's revision, else the
// update starts over from the stored version.
func (s *MemStore) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool, preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	if _, err := conversion.EnforcePtr(destination); err != nil {
		return fmt.Errorf("the update's destination: %w", err)
	}
	v, err := s.begin(key, cachedExistingObject, ignoreNotFound)
	for err == nil {
		data, uerr := s.propose(key, v, preconditions, tryUpdate)
		if uerr != nil {
			v, err = s.recheck(key, v, ignoreNotFound, uerr)
			continue
		}
		if bytes.Equal(data, v.data) {
			if !v.fromCache {
				return s.decode(v.data, destination, v.rev)
			}
			if v, err = s.load(key, ignoreNotFound); err == nil && bytes.Equal(data, v.data) {
				return s.decode(v.data, destination, v.rev)
			}
			continue
		}
		s.mu.Lock()
		rev, ok := s.commitLocked(key, v.rev, data)
		s.mu.Unlock()
		if ok {
			return s.decode(data, destination, rev)
		}
		v, err = s.load(key, ignoreNotFound)
	}
	return err
}

// propose checks the preconditions on v, runs tryUpdate on it and returns
// the encoded result.
func (s *MemStore) propose(key string, v *version, preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc) ([]byte, error) {
	if err := preconditions.Check(key, v.obj); err != nil {
		return nil, err
	}
	updated, _, err := tryUpdate(v.obj, v.responseMeta())
	if err != nil {
		return nil, err
	}
	if err := s.versioner.PrepareObjectForStorage(updated); err != nil {
		return nil, fmt.Errorf("preparing the updated object: %w", err)
	}
	return runtime.Encode(s.codec, updated)
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
