package discovery

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFailureOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("list: %w", x509.UnknownAuthorityError{}), "failed TLS verification"},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "failed the TLS handshake"},
		{errors.New("dial tcp 10.0.0.7:6443: connect: connection refused"), "did not answer"},
	} {
		if got := failureOf(tt.err); got != tt.want {
			t.Errorf("failureOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestListRefusal(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("no")), "forbidden: missing RBAC rule"},
		{"throttled", apierrors.NewTooManyRequests("slow down", 3), "HTTP 429 Too Many Requests, Retry-After 3s: API Priority and Fairness"},
		{"other", errors.New("boom"), "boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := listRefusal(tt.err); !strings.HasPrefix(got, tt.want) {
				t.Errorf("listRefusal = %q, want it to start %q", got, tt.want)
			}
		})
	}
}
