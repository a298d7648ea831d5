package replay

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/watch-doctor/watch-doctor/internal/cacher"
)

// firstResourceVersion is the resource version of the first object.
const firstResourceVersion = 1000

// world is the scenario's objects and their changes, the same for every
// column: the storage every backend is fed from. Not safe for concurrent
// use: the driver owns it.
type world struct {
	resources []*worldResource
	byName    map[string]*worldResource
}

type worldResource struct {
	name    string
	trigger string
	objects []*objectLife
	byNS    map[string][]*objectLife
	rv      uint64
	updates []updateStream
}

// objectLife is one object and the resource versions of its versions.
type objectLife struct {
	ns, name string
	size     int
	versions []uint64
	current  *cacher.Object
}

type updateStream struct {
	targets    []*objectLife
	perSecond  float64
	from, to   time.Duration
	next       int
	emittedSum int64
}

func newWorld(s *Scenario) *world {
	w := &world{byName: map[string]*worldResource{}}
	for _, r := range s.Resources {
		wr := &worldResource{name: r.Name, trigger: r.IndexedTrigger, byNS: map[string][]*objectLife{}, rv: firstResourceVersion - 1}
		for _, g := range r.Objects {
			for i := 0; i < g.Count; i++ {
				wr.rv++
				name := fmt.Sprintf("%s-%05d", singular(r.Name), len(wr.byNS[g.Namespace]))
				o := &objectLife{ns: g.Namespace, name: name, size: int(g.Bytes), versions: []uint64{wr.rv}}
				o.current = &cacher.Object{Namespace: g.Namespace, Name: name, ResourceVersion: wr.rv, Size: int(g.Bytes)}
				wr.objects = append(wr.objects, o)
				wr.byNS[g.Namespace] = append(wr.byNS[g.Namespace], o)
			}
		}
		for _, u := range r.Updates {
			us := updateStream{perSecond: u.PerSecond, from: u.From.Duration, to: u.Until.Duration}
			if u.Namespace == "" {
				us.targets = wr.objects
			} else {
				us.targets = wr.byNS[u.Namespace]
			}
			wr.updates = append(wr.updates, us)
		}
		w.resources = append(w.resources, wr)
		w.byName[r.Name] = wr
	}
	return w
}

func singular(resource string) string {
	if len(resource) > 1 && resource[len(resource)-1] == 's' {
		return resource[:len(resource)-1]
	}
	return resource
}

func (w *world) initial() []ResourceState {
	out := make([]ResourceState, 0, len(w.resources))
	for _, r := range w.resources {
		objs := make([]*cacher.Object, len(r.objects))
		for i, o := range r.objects {
			objs[i] = o.current
		}
		out = append(out, ResourceState{Name: r.name, Objects: objs, ResourceVersion: r.rv, IndexedTrigger: r.trigger})
	}
	return out
}

// change is one object update to apply to every backend.
type change struct {
	resource string
	typ      watch.EventType
	obj      *cacher.Object
}

// changesAt returns the updates of the tick starting at t: each stream
// emits floor(rate * elapsed) updates by the end of the tick, spread
// round-robin over its objects.
func (w *world) changesAt(t, tick time.Duration) []change {
	var out []change
	for _, r := range w.resources {
		for i := range r.updates {
			u := &r.updates[i]
			if len(u.targets) == 0 || u.perSecond == 0 || t < u.from || (u.to > 0 && t >= u.to) {
				continue
			}
			due := int64(math.Floor(u.perSecond * (t + tick - u.from).Seconds()))
			for ; u.emittedSum < due; u.emittedSum++ {
				o := u.targets[u.next%len(u.targets)]
				u.next++
				r.rv++
				o.versions = append(o.versions, r.rv)
				o.current = &cacher.Object{Namespace: o.ns, Name: o.name, ResourceVersion: r.rv, Size: o.size}
				out = append(out, change{resource: r.name, typ: watch.Modified, obj: o.current})
			}
		}
	}
	return out
}

// inScope counts the objects a watch of namespace ns selects now.
func (r *worldResource) inScope(ns string) int {
	if ns == "" {
		return len(r.objects)
	}
	return len(r.byNS[ns])
}

// versionKey names one version of one object.
type versionKey struct {
	ns, name string
	rv       uint64
}

// snapshotAt adds to held the object versions current at rv, which is what
// an interval taken at rv keeps reachable: every object of the resource
// (upstream's lazy snapshot lists the whole store, watch_cache_interval.go:278-286).
func (r *worldResource) snapshotAt(rv uint64, held map[versionKey]int) {
	for _, o := range r.objects {
		var at uint64
		for _, v := range o.versions {
			if v > rv {
				break
			}
			at = v
		}
		if at != 0 {
			held[versionKey{o.ns, o.name, at}] = o.size
		}
	}
}
