//go:build apiserver_v038

package upstream

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

// This file is compiled only against k8s.io/apiserver v0.38 (build tag
// apiserver_v038, set by hack/replay/v1.38, the 1.38 replay column's
// module): v0.38's storage.Interface adds one-attempt conditional writes
// (pkg/storage/interfaces.go:194-197 and :258-261), whose storage.ObjState
// v0.37.2 does not have. The cacher only passes them through to its storage
// (cacher/delegator.go:137 and :307); no replay calls them. They mirror the
// etcd3 store's (etcd3/store.go:394-434 and :472-): one compare-and-swap
// at origState.Rev, and on a stale revision a ResourceVersionConflicts
// error carrying the store's current revision, without a retry.

// DeleteOnce implements storage.Interface (v0.38): it deletes key if it is
// still at origState.Rev and decodes the deleted value into out.
func (s *MemStore) DeleteOnce(ctx context.Context, key string, origState *storage.ObjState, out runtime.Object) error {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	rev, ok := s.commitLocked(key, origState.Rev, nil)
	cur := s.rev
	s.mu.Unlock()
	if !ok {
		return storage.NewResourceVersionConflictsError(key, cur)
	}
	return s.decode(origState.Data, out, rev)
}

// UpdateOnce implements storage.Interface (v0.38): it writes obj if key is
// still at origState.Rev (0: absent, which ignoreNotFound allows) and
// returns the state it wrote, decoded into destination.
func (s *MemStore) UpdateOnce(ctx context.Context, key string, origState *storage.ObjState, obj runtime.Object, ttl uint64, destination runtime.Object, ignoreNotFound bool) (*storage.ObjState, error) {
	key, err := s.prepareKey(key, false)
	if err != nil {
		return nil, err
	}
	if origState.Rev == 0 && !ignoreNotFound {
		return nil, storage.NewKeyNotFoundError(key, 0)
	}
	if err := s.versioner.PrepareObjectForStorage(obj); err != nil {
		return nil, err
	}
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	rev, ok := s.commitLocked(key, origState.Rev, data)
	cur := s.rev
	s.mu.Unlock()
	if !ok {
		return nil, storage.NewResourceVersionConflictsError(key, cur)
	}
	if err := s.decode(data, destination, rev); err != nil {
		return nil, err
	}
	return &storage.ObjState{Obj: destination, Meta: &storage.ResponseMeta{ResourceVersion: uint64(rev)}, Rev: rev, Data: data, Current: true, FromStorage: true}, nil
}
