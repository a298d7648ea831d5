package upstream

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
)

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
