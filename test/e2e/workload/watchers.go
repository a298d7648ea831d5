package workload

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// Behaviour is how a Watcher consumes its watch.
type Behaviour int

const (
	// StopAfterFirst reads one event, then never reads again and keeps the
	// watch open: the reproduction of kubernetes issue 131721.
	StopAfterFirst Behaviour = iota
	// Paced reads one event per interval.
	Paced
	// ReadAll reads every event as it arrives.
	ReadAll
)

// InitialEventsListOptions are the watch options of the issue 131721
// reproduction: a watch-list (streaming initial events) request served from
// the watch cache.
func InitialEventsListOptions() metav1.ListOptions {
	return metav1.ListOptions{
		ResourceVersion:      "0",
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
		TimeoutSeconds:       ptr.To[int64](3600),
	}
}

// Watcher is one watch client: a client-go clientset with its own user, its
// own HTTP/2 connection and one Pods().Watch, consumed according to its
// Behaviour on a goroutine of its own.
//
// Thread safety: all methods may be called from any goroutine.
type Watcher struct {
	name   string
	events atomic.Int64
	cancel context.CancelFunc
	done   chan struct{} // closed when the consuming goroutine returned

	mu  sync.Mutex
	err error // why the watch ended early; guarded by mu
}

// WatcherOptions configures StartWatcher.
type WatcherOptions struct {
	// Name identifies the watcher in messages (usually its user name).
	Name      string
	Namespace string
	// ListOptions are passed to Pods(Namespace).Watch as they are.
	ListOptions metav1.ListOptions
	Behaviour   Behaviour
	// Interval is the pause between two reads for Paced.
	Interval time.Duration
	// SourceIP, when set, is the local address of the watch's connection
	// (127.0.0.2, say: any 127/8 address is on lo), as a client on
	// another host would have one of its own.
	SourceIP net.IP
}

// StartSlowInformer starts the issue 131721 client: initial-events watch,
// reads one event, then stops reading.
func StartSlowInformer(ctx context.Context, cfg *rest.Config, namespace string) (*Watcher, error) {
	return StartWatcher(ctx, cfg, WatcherOptions{
		Name: "slow-informer", Namespace: namespace,
		ListOptions: InitialEventsListOptions(), Behaviour: StopAfterFirst,
	})
}

// StartPacedReader starts a client with the same initial-events watch that
// reads one event every interval: slow but progressing.
func StartPacedReader(ctx context.Context, cfg *rest.Config, namespace string, interval time.Duration) (*Watcher, error) {
	return StartWatcher(ctx, cfg, WatcherOptions{
		Name: "paced-reader", Namespace: namespace,
		ListOptions: InitialEventsListOptions(), Behaviour: Paced, Interval: interval,
	})
}

// StartHealthyClient starts a plain streaming watch (no initial events,
// resourceVersion unset) that reads everything.
func StartHealthyClient(ctx context.Context, cfg *rest.Config, namespace string) (*Watcher, error) {
	return StartWatcher(ctx, cfg, WatcherOptions{
		Name: "healthy-client", Namespace: namespace, Behaviour: ReadAll,
	})
}

// StartWatcher opens the watch (returning its error, if any) and consumes it
// in the background until Stop is called or ctx ends.
//
// cfg is copied and given a dialer of its own: client-go shares one transport,
// hence one HTTP/2 connection, between configs that differ only in their
// credentials, and the clients must not share flow-control windows (they were
// separate programs when the fixtures were captured).
func StartWatcher(ctx context.Context, cfg *rest.Config, opts WatcherOptions) (*Watcher, error) {
	if opts.Behaviour == Paced && opts.Interval <= 0 {
		return nil, fmt.Errorf("watcher %q: Paced needs a positive Interval", opts.Name)
	}
	cfg = rest.CopyConfig(cfg)
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if opts.SourceIP != nil {
		d.LocalAddr = &net.TCPAddr{IP: opts.SourceIP}
	}
	cfg.Dial = d.DialContext
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("watcher %q: %w", opts.Name, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := cs.CoreV1().Pods(opts.Namespace).Watch(ctx, opts.ListOptions)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watcher %q: watch pods in %q: %w", opts.Name, opts.Namespace, err)
	}
	wr := &Watcher{name: opts.Name, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(wr.done)
		defer w.Stop()
		wr.consume(ctx, w, opts)
	}()
	return wr, nil
}

func (wr *Watcher) consume(ctx context.Context, w watch.Interface, opts WatcherOptions) {
	var tick <-chan time.Time
	if opts.Behaviour == Paced {
		t := time.NewTicker(opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				wr.setErr(fmt.Errorf("watch closed by the server after %d events", wr.events.Load()))
				return
			}
			wr.events.Add(1)
			if ev.Type == watch.Error {
				wr.setErr(fmt.Errorf("watch error event: %v", ev.Object))
				return
			}
		}
		switch opts.Behaviour {
		case StopAfterFirst:
			// Keep the watch open and never read again.
			<-ctx.Done()
			return
		case Paced:
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
	}
}

func (wr *Watcher) setErr(err error) {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	wr.err = err
}

// Name is the name given in WatcherOptions.
func (wr *Watcher) Name() string { return wr.name }

// Events is the number of events received so far (bookmarks included).
func (wr *Watcher) Events() int64 { return wr.events.Load() }

// Err says why the watch ended before Stop (closed by the server, or an error
// event); nil while it runs.
func (wr *Watcher) Err() error {
	wr.mu.Lock()
	defer wr.mu.Unlock()
	return wr.err
}

// Stop cancels the watch, closes it and waits for the consuming goroutine.
// Safe to call more than once.
func (wr *Watcher) Stop() {
	wr.cancel()
	<-wr.done
}

// StopAll stops every watcher.
func StopAll(ws ...*Watcher) {
	for _, w := range ws {
		if w != nil {
			w.Stop()
		}
	}
}
