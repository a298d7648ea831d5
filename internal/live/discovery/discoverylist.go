package discovery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// listAPIServers lists the EndpointSlices of default/kubernetes once: no
// retry. client-go retries a 429 with Retry-After up to 10 times
// (client-go rest/request.go, Request.maxRetries and checkWait), which
// spent the whole request timeout on a throttled server before saying it
// "did not answer"; a 429 is the situation this tool exists for, and is
// said at once (listRefusal).
func listAPIServers(ctx context.Context, cfg *rest.Config) (*discoveryv1.EndpointSliceList, error) {
	// The discovery.k8s.io/v1 client alone: the whole clientset
	// (k8s.io/client-go/kubernetes) links every group's typed client and
	// apply configurations, about 2 MB of binary for one list.
	dc, err := discoveryclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	list := &discoveryv1.EndpointSliceList{}
	err = dc.RESTClient().Get().
		Namespace(metav1.NamespaceDefault).Resource("endpointslices").
		VersionedParams(&metav1.ListOptions{LabelSelector: kubernetesServiceLabel}, scheme.ParameterCodec).
		MaxRetries(0).
		Do(ctx).Into(list)
	if err != nil {
		return nil, err
	}
	return list, nil
}

// discoveryGuardError is the guard's refusal of the list (a redirect, an
// oversized or HTML answer), which ends the run: the server is not the
// Kubernetes API it claims to be, and nothing is read through it.
func discoveryGuardError(err error) error {
	if g := model.GuardError(err); g != nil {
		return g
	}
	var tl *model.TooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	return nil
}

// listRefusal phrases an API status refusing the list.
func listRefusal(err error) string {
	switch {
	case isForbiddenStatus(err):
		return fmt.Sprintf("forbidden: missing RBAC rule %s", model.EndpointSlicesRule())
	case apierrors.IsTooManyRequests(err):
		after := ""
		if s, ok := apierrors.SuggestsClientDelay(err); ok {
			after = fmt.Sprintf(", Retry-After %ds", s)
		}
		return fmt.Sprintf("HTTP 429 Too Many Requests%s: %s; %v", after, model.ApfThrottling, err)
	}
	return err.Error()
}

// failureOf says how a list without any API answer failed: a TLS
// failure is named as one, a refused or timed-out connection "did not
// answer".
func failureOf(err error) string {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	switch {
	case errors.As(err, &ua), errors.As(err, &he), errors.As(err, &ci), errors.As(err, &cv):
		return "failed TLS verification"
	case errors.As(err, &rh), errors.As(err, &ae):
		return "failed the TLS handshake"
	}
	return "did not answer"
}
