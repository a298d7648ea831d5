package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// The users in the static token file. Each has its own bearer token and
// kubeconfig; see Cluster.Kubeconfig.
const (
	// UserAdmin is in group system:masters: everything is allowed.
	UserAdmin = "admin"
	// UserWatchDoctor is the diagnosing user: bound only to ClusterRole
	// DiagnoseRole (debug endpoints, /metrics, /version, listing
	// EndpointSlices to find every API server).
	UserWatchDoctor = "watch-doctor"
	// UserNoDebug is authenticated but has no rule beyond the defaults every
	// authenticated user gets, so the debug endpoints answer 403.
	UserNoDebug = "no-debug"
	// UserSlowInformer, UserPacedReader and UserHealthyClient run the watch
	// workload; each is bound to PodReaderRole.
	UserSlowInformer  = "slow-informer"
	UserPacedReader   = "paced-reader"
	UserHealthyClient = "healthy-client"
	// UserSlowInformer1 and UserSlowInformer3 run the HA cluster's stuck
	// watches on apiserver-1 and apiserver-3 (slow-informer's is on
	// apiserver-2), so each finding names the instance it must be on;
	// bound to PodReaderRole.
	UserSlowInformer1 = "slow-informer-1"
	UserSlowInformer3 = "slow-informer-3"
	// UserCurlReader, UserKubectlReader and UserNodeReader run the
	// attribution test's clients written by others (curl, kubectl,
	// @kubernetes/client-node); bound to PodReaderRole too.
	UserCurlReader    = "curl-reader"
	UserKubectlReader = "kubectl-reader"
	UserNodeReader    = "node-reader"
)

// Names of the RBAC objects the harness creates.
const (
	DiagnoseRole  = "watch-doctor:diagnose"
	PodReaderRole = "watch-doctor-e2e:pod-reader"
)

// Users lists every user in the token file, admin first.
func Users() []string {
	return []string{UserAdmin, UserWatchDoctor, UserNoDebug, UserSlowInformer, UserPacedReader, UserHealthyClient,
		UserCurlReader, UserKubectlReader, UserNodeReader, UserSlowInformer1, UserSlowInformer3}
}

// user is one line of the static token file.
type user struct {
	name   string
	token  string
	groups []string
}

func newUsers() (map[string]user, error) {
	users := make(map[string]user)
	for _, name := range Users() {
		tok, err := randomToken()
		if err != nil {
			return nil, err
		}
		u := user{name: name, token: tok}
		if name == UserAdmin {
			u.groups = []string{"system:masters"}
		}
		users[name] = u
	}
	return users, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// writeTokenFile writes the --token-auth-file CSV: token,user,uid,"groups".
func writeTokenFile(path string, users map[string]user) error {
	var b strings.Builder
	for i, name := range Users() {
		u := users[name]
		fmt.Fprintf(&b, "%s,%s,%d", u.token, u.name, 1000+i)
		if len(u.groups) > 0 {
			fmt.Fprintf(&b, ",%q", strings.Join(u.groups, ","))
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// rbacObjects returns the ClusterRoles and ClusterRoleBindings the harness
// creates once the API server is ready.
func rbacObjects() ([]*rbacv1.ClusterRole, []*rbacv1.ClusterRoleBinding, error) {
	labels := map[string]string{"app.kubernetes.io/managed-by": "watch-doctor-e2e"}
	// The diagnosing user gets exactly the ClusterRole the repository ships,
	// so the suite proves deploy/rbac.yaml is sufficient.
	shipped, err := ShippedClusterRole()
	if err != nil {
		return nil, nil, err
	}
	shipped.Name, shipped.Labels = DiagnoseRole, labels
	roles := []*rbacv1.ClusterRole{
		shipped,
		{
			ObjectMeta: metav1.ObjectMeta{Name: PodReaderRole, Labels: labels},
			Rules: []rbacv1.PolicyRule{{
				Verbs:     []string{"get", "list", "watch"},
				APIGroups: []string{""},
				Resources: []string{"pods", "configmaps", "secrets"},
			}},
		},
	}
	bind := func(name, role string, users ...string) *rbacv1.ClusterRoleBinding {
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		}
		for _, u := range users {
			b.Subjects = append(b.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
		}
		return b
	}
	bindings := []*rbacv1.ClusterRoleBinding{
		bind(DiagnoseRole, DiagnoseRole, UserWatchDoctor),
		bind(PodReaderRole, PodReaderRole, UserSlowInformer, UserPacedReader, UserHealthyClient,
			UserCurlReader, UserKubectlReader, UserNodeReader, UserSlowInformer1, UserSlowInformer3),
	}
	return roles, bindings, nil
}

// ShippedRBACPath is deploy/rbac.yaml, relative to the test/e2e module.
const ShippedRBACPath = "../../deploy/rbac.yaml"

// ShippedClusterRole reads the ClusterRole of deploy/rbac.yaml.
func ShippedClusterRole() (*rbacv1.ClusterRole, error) {
	b, err := os.ReadFile(ShippedRBACPath)
	if err != nil {
		return nil, fmt.Errorf("reading the shipped RBAC: %w", err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return nil, fmt.Errorf("%s: %w", ShippedRBACPath, err)
	}
	if role.Kind != "ClusterRole" || len(role.Rules) == 0 {
		return nil, fmt.Errorf("%s: want a ClusterRole with rules, got kind %q with %d rules", ShippedRBACPath, role.Kind, len(role.Rules))
	}
	return &role, nil
}

func applyRBAC(ctx context.Context, admin kubernetes.Interface) error {
	roles, bindings, err := rbacObjects()
	if err != nil {
		return err
	}
	for _, r := range roles {
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRole %q: %w", r.Name, err)
		}
	}
	for _, b := range bindings {
		if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ClusterRoleBinding %q: %w", b.Name, err)
		}
	}
	return nil
}

// accessCheck is one question put to the authorizer after the RBAC objects
// were created: the RBAC authorizer reads them through informers, so they take
// effect a moment later.
type accessCheck struct {
	user    string
	allowed bool
	attrs   authorizationv1.SubjectAccessReviewSpec
}

func accessChecks() []accessCheck {
	nonResource := func(user, path string, allowed bool) accessCheck {
		return accessCheck{user: user, allowed: allowed, attrs: authorizationv1.SubjectAccessReviewSpec{
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"},
		}}
	}
	watchPods := func(user string) accessCheck {
		return accessCheck{user: user, allowed: true, attrs: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods", Namespace: "rand2"},
		}}
	}
	return []accessCheck{
		nonResource(UserWatchDoctor, "/debug/pprof/goroutine", true),
		nonResource(UserWatchDoctor, "/debug/api_priority_and_fairness/dump_requests", true),
		nonResource(UserWatchDoctor, "/metrics", true),
		{user: UserWatchDoctor, allowed: true, attrs: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Group: "discovery.k8s.io", Resource: "endpointslices"},
		}},
		{user: UserWatchDoctor, allowed: true, attrs: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Group: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"},
		}},
		nonResource(UserNoDebug, "/debug/pprof/goroutine", false),
		watchPods(UserSlowInformer),
		watchPods(UserPacedReader),
		watchPods(UserHealthyClient),
		watchPods(UserCurlReader),
		watchPods(UserKubectlReader),
		watchPods(UserNodeReader),
		watchPods(UserSlowInformer1),
		watchPods(UserSlowInformer3),
	}
}

// rbacInEffect reports whether the authorizer answers every accessCheck as
// expected. A nil error with false means "not yet".
func rbacInEffect(ctx context.Context, admin kubernetes.Interface) (bool, error) {
	for _, c := range accessChecks() {
		spec := c.attrs
		spec.User = c.user
		spec.Groups = []string{"system:authenticated"}
		sar, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx,
			&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("SubjectAccessReview for %q: %w", c.user, err)
		}
		if sar.Status.Allowed != c.allowed {
			return false, nil
		}
	}
	return true, nil
}
