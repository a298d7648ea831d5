package upstream

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

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
