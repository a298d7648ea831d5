package workload

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
)

// SeedConfigs are the three users' configs of the seed reproduction.
type SeedConfigs struct {
	SlowInformer, PacedReader, HealthyClient *rest.Config
}

// Seed is the seed reproduction's three clients (testdata/kube-apiserver-v1.37.2/README.md):
// a stuck reader, a paced reader and a healthy client, on pods in one
// namespace.
//
// Thread safety: Stop may be called from any goroutine.
type Seed struct {
	SlowInformer, PacedReader, HealthyClient *Watcher
	// ClientsStarted is when the slow informer opened its watch.
	ClientsStarted time.Time
}

// StartSeed starts the slow informer, waits with senderBlocked until its
// watcher shows in the server blocked sending initial events, then starts
// the paced reader (one event per interval) and the healthy client. The
// wait keeps the two initial-events requests seconds apart, so the order
// of their handler goroutines follows their arrival (see
// internal/diagnosis/components.go). On error whatever started is stopped.
func StartSeed(ctx context.Context, cfgs SeedConfigs, namespace string, interval time.Duration, senderBlocked func(context.Context) error) (*Seed, error) {
	s := &Seed{ClientsStarted: time.Now()}
	var err error
	if s.SlowInformer, err = StartSlowInformer(ctx, cfgs.SlowInformer, namespace); err != nil {
		return nil, err
	}
	if err = senderBlocked(ctx); err == nil {
		s.PacedReader, err = StartPacedReader(ctx, cfgs.PacedReader, namespace, interval)
	}
	if err == nil {
		s.HealthyClient, err = StartHealthyClient(ctx, cfgs.HealthyClient, namespace)
	}
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("seed workload: %w", err)
	}
	return s, nil
}

// Stop stops the three clients.
func (s *Seed) Stop() { StopAll(s.SlowInformer, s.PacedReader, s.HealthyClient) }
