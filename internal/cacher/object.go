package cacher

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Object is one version of one stored object: what delivery depends on,
// which is its key, its resource version and its size on the wire. The
// payload itself is not kept: a replay of 20000 objects of 20 KiB costs a
// few megabytes, not 400.
//
// An Object is immutable once handed to the cache and may be shared by any
// number of goroutines; DeepCopyObject returns a private copy.
type Object struct {
	Namespace       string
	Name            string
	ResourceVersion uint64
	// Size is the encoded size of the object as one watch event, in bytes.
	Size int
	// InitialEventsEnd marks the bookmark that closes the initial events of
	// a watch-list request (the "k8s.io/initial-events-end" annotation
	// upstream sets in cache_watcher.go:377).
	InitialEventsEnd bool
}

var _ runtime.Object = &Object{}

// GetObjectKind implements runtime.Object; Objects carry no type metadata.
func (o *Object) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject implements runtime.Object.
func (o *Object) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

// Key is the object's key below the resource prefix: "/namespace/name", or
// "/name" for cluster-scoped objects.
func (o *Object) Key() string {
	if o.Namespace == "" {
		return "/" + o.Name
	}
	return "/" + o.Namespace + "/" + o.Name
}

// watchCacheEvent is one change as the cache keeps it (upstream
// watch_cache.go:60). Object is the new version (for Deleted: the deleted
// object at the deletion's resource version); PrevObject the version it
// replaced, nil for Added. Immutable once built.
type watchCacheEvent struct {
	Type            watch.EventType
	Object          *Object
	PrevObject      *Object
	ResourceVersion uint64
	// RecordTime is the clock time the cache received the event; the history
	// ring sizes itself from it.
	RecordTime time.Time
}
