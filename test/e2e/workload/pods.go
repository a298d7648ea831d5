// Package workload creates the objects and runs the watch clients of the
// kubernetes issue 131721 reproduction: many large pods in one namespace, a
// client that opens a watch with initial events and stops reading, a client
// that reads slowly, and a healthy one.
package workload

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// PayloadAnnotation is the annotation that carries each pod's random bytes.
const PayloadAnnotation = "watch-doctor.io/payload"

// PodsOptions describes the pods CreatePods makes.
type PodsOptions struct {
	// Namespace is created if missing.
	Namespace string
	// Count is the number of pods, named payload-00000 and up.
	Count int
	// AnnotationBytes is the length of each pod's PayloadAnnotation value:
	// base64 of crypto/rand bytes, so gzip (which the API server applies to
	// watch responses) cannot shrink it and the client's HTTP/2 flow-control
	// window fills after a few objects.
	AnnotationBytes int
	// Workers is the number of concurrent create requests.
	Workers int
}

// DefaultPodsOptions is the workload the shared fixtures were captured with:
// 2000 pods of ~20 KB in namespace rand2, 16 at a time.
func DefaultPodsOptions() PodsOptions {
	return PodsOptions{Namespace: "rand2", Count: 2000, AnnotationBytes: 20 * 1024, Workers: 16}
}

// PodName returns the name of the i-th pod.
func PodName(i int) string { return fmt.Sprintf("payload-%05d", i) }

// CreatePods creates the namespace, its default ServiceAccount (there is no
// controller manager to create it, and the ServiceAccount admission plugin
// wants it) and opts.Count pods. Pods that already exist are left alone, so a
// second call is cheap. The clientset should allow a high QPS (the default
// client-side limit of 5 per second would take minutes).
func CreatePods(ctx context.Context, cs kubernetes.Interface, opts PodsOptions) error {
	if opts.Namespace == "" || opts.Count < 0 || opts.AnnotationBytes < 0 {
		return fmt.Errorf("invalid workload.PodsOptions %+v", opts)
	}
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %q: %w", opts.Namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := cs.CoreV1().ServiceAccounts(opts.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/default: %w", opts.Namespace, err)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for i := range next {
				if err := createPod(ctx, cs, opts, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
feed:
	for i := range opts.Count {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

func createPod(ctx context.Context, cs kubernetes.Interface, opts PodsOptions, i int) error {
	payload, err := randomBase64(opts.AnnotationBytes)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        PodName(i),
			Labels:      map[string]string{"app.kubernetes.io/name": "watch-doctor-e2e-payload"},
			Annotations: map[string]string{PayloadAnnotation: payload},
		},
		Spec: corev1.PodSpec{
			// Never scheduled (there is no scheduler or kubelet); the image
			// is never pulled.
			Containers:                   []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
			AutomountServiceAccountToken: ptr.To(false),
		},
	}
	_, err = cs.CoreV1().Pods(opts.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create pod %s/%s: %w", opts.Namespace, pod.Name, err)
	}
	return nil
}

// randomBase64 returns the base64 encoding of crypto/rand bytes, n characters
// long rounded down to a multiple of 4.
func randomBase64(n int) (string, error) {
	raw := make([]byte, n/4*3)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("random payload: %w", err)
	}
	return base64.StdEncoding.EncodeToString(raw), nil
}
