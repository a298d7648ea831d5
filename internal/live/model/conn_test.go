package model

import (
	"testing"
	"time"
)

func TestBalancerBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		b     BalancerBound
		want  int
		wantT time.Duration
	}{
		{"unknown count", BalancerBound{}, 12, 60 * time.Second},
		{"three live", BalancerBound{}, 19, 60 * time.Second},
		{"many live", BalancerBound{}, 64, 60 * time.Second},
		{"set", BalancerBound{Connections: 7, Time: time.Second}, 7, time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := map[string]int{"unknown count": 0, "three live": 3, "many live": 100, "set": 3}[tt.name]
			if got := tt.b.ConnectionsFor(want); got != tt.want {
				t.Errorf("ConnectionsFor(%d) = %d, want %d", want, got, tt.want)
			}
			if got := tt.b.TimeOrDefault(); got != tt.wantT {
				t.Errorf("TimeOrDefault() = %s, want %s", got, tt.wantT)
			}
		})
	}
}

func TestFingerprintString(t *testing.T) {
	t.Parallel()
	if got, want := (Fingerprint{Start: 1700000000.5}).String(), "process_start_time_seconds 1700000000.50"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := (Fingerprint{Start: 1, IDHash: "sha256:ab"}).String(), "process_start_time_seconds 1.00, apiserver_id_hash sha256:ab"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The ledger gives each process to the first client claiming it; the
// owner may claim it again.
func TestProcessLedger(t *testing.T) {
	t.Parallel()
	var l ProcessLedger
	a, b := &Client{}, &Client{}
	if got := l.Claim(1, a); got != nil {
		t.Errorf("first claim: owned by %p", got)
	}
	if got := l.Claim(1, a); got != nil {
		t.Errorf("the owner's claim again: owned by %p", got)
	}
	if got := l.Claim(1, b); got != a {
		t.Errorf("another's claim: owned by %p, want %p", got, a)
	}
	if got := l.Claim(2, b); got != nil {
		t.Errorf("a new process: owned by %p", got)
	}
}
