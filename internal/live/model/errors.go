package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Rule is one RBAC policy rule the plugin needs.
type Rule struct {
	NonResourceURL string
	APIGroup       string
	Resource       string
	Verb           string
}

func (r Rule) String() string {
	if r.NonResourceURL != "" {
		return fmt.Sprintf(`nonResourceURLs: [%q], verbs: [%q]`, r.NonResourceURL, r.Verb)
	}
	return fmt.Sprintf(`apiGroups: [%q], resources: [%q], verbs: [%q]`, r.APIGroup, r.Resource, r.Verb)
}

// EndpointSlicesRule is the rule that grants discovery of the instances (a
// function, so that no caller can change the rule another reads).
func EndpointSlicesRule() Rule {
	return Rule{APIGroup: "discovery.k8s.io", Resource: "endpointslices", Verb: "list"}
}

// Rules are every rule the plugin uses, and nothing more; deploy/rbac.yaml
// grants exactly these.
func Rules() []Rule {
	return []Rule{
		{NonResourceURL: "/debug/pprof/*", Verb: "get"},
		{NonResourceURL: "/debug/api_priority_and_fairness/*", Verb: "get"},
		{NonResourceURL: "/metrics", Verb: "get"},
		{NonResourceURL: "/version", Verb: "get"},
		EndpointSlicesRule(),
		LeasesRule(),
	}
}

// ClusterRole is deploy/rbac.yaml's ClusterRole, printed when a request is
// refused.
const ClusterRole = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: watch-doctor
rules:
- nonResourceURLs: ["/debug/pprof/*"]
  verbs: ["get"]
- nonResourceURLs: ["/debug/api_priority_and_fairness/*"]
  verbs: ["get"]
- nonResourceURLs: ["/metrics"]
  verbs: ["get"]
- nonResourceURLs: ["/version"]
  verbs: ["get"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["list"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["list"]
`

// ruleFor returns the rule that grants a GET of path.
func ruleFor(path string) Rule {
	for _, r := range Rules() {
		u := r.NonResourceURL
		if u == "" {
			continue
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*")) || path == u {
			return r
		}
	}
	return Rule{NonResourceURL: path, Verb: "get"}
}

// ForbiddenError is a request refused by authorization.
type ForbiddenError struct {
	Instance string
	Path     string
	Rule     Rule
	// Message is the API server's own reason.
	Message string
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s: GET %s forbidden: missing RBAC rule %s (%s)", e.Instance, e.Path, e.Rule, e.Message)
}

// ProfilingDisabledError is a 404 on /debug/pprof: the API server runs
// with --profiling=false.
type ProfilingDisabledError struct{ Instance string }

func (e *ProfilingDisabledError) Error() string {
	return fmt.Sprintf("%s: /debug/pprof is not served: profiling is disabled on this API server (--profiling=false); goroutine dumps cannot be taken", e.Instance)
}

// ProfileRefusal is the HTTP status of err when it is /debug/pprof
// refusing the goroutine profiles: 404 (a *ProfilingDisabledError) or 403
// (a *ForbiddenError for a /debug/pprof path); 0 otherwise. Either way no
// goroutine dump or execution trace can be taken from that server.
func ProfileRefusal(err error) int {
	var pe *ProfilingDisabledError
	var fe *ForbiddenError
	switch {
	case errors.As(err, &pe):
		return http.StatusNotFound
	case errors.As(err, &fe) && strings.HasPrefix(fe.Path, "/debug/pprof/"):
		return http.StatusForbidden
	}
	return 0
}

// ProfileStatus is the status /debug/pprof refused a sample's goroutine
// profiles with (api.Sample.ProfileStatus): 404 or 403; 0 when none was
// refused.
func (r InstanceResult) ProfileStatus() int {
	for _, s := range r.Samples {
		if s.ProfileStatus != 0 {
			return s.ProfileStatus
		}
	}
	return 0
}

// refusedEvidence is the evidence of an instance whose /debug/pprof
// refused the profiles: what was read instead.
func refusedEvidence(status int) string {
	why := fmt.Sprintf("/debug/pprof answered %d", status)
	switch status {
	case http.StatusNotFound:
		why += ": profiling is disabled on this API server (--profiling=false)"
	case http.StatusForbidden:
		why += fmt.Sprintf(": missing RBAC rule %s", ruleFor("/debug/pprof/"))
	}
	return "APF dump_requests and /metrics only, no goroutine dump or execution trace: " + why
}

// HTTPError is any other non-200 answer.
type HTTPError struct {
	Instance string
	Path     string
	Status   int
	Message  string
}

func (e *HTTPError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("%s: GET %s: HTTP %d: %s", e.Instance, e.Path, e.Status, msg)
}

// IsForbidden reports whether err is (or wraps) a ForbiddenError.
func IsForbidden(err error) bool {
	var fe *ForbiddenError
	return errors.As(err, &fe)
}

// statusError turns a non-200 response into an error; body is at most a
// few KiB of the response.
func statusError(instance, path string, status int, body []byte) error {
	msg := statusMessage(body)
	switch {
	case status == http.StatusForbidden:
		return &ForbiddenError{Instance: instance, Path: path, Rule: ruleFor(path), Message: msg}
	case status == http.StatusNotFound && strings.HasPrefix(path, "/debug/pprof"):
		return &ProfilingDisabledError{Instance: instance}
	case status == http.StatusNotFound && strings.HasPrefix(path, "/debug/api_priority_and_fairness"):
		return &HTTPError{Instance: instance, Path: path, Status: status, Message: "not served: API Priority and Fairness is disabled on this API server (--enable-priority-and-fairness=false)"}
	case status == http.StatusTooManyRequests:
		return &HTTPError{Instance: instance, Path: path, Status: status, Message: ApfThrottling + " (" + msg + ")"}
	case status == http.StatusUnauthorized:
		return &HTTPError{Instance: instance, Path: path, Status: status, Message: "the credentials of the kubeconfig were rejected"}
	}
	return &HTTPError{Instance: instance, Path: path, Status: status, Message: msg}
}

// ApfThrottling is what a 429 means on a kube-apiserver: the situation
// this tool exists for.
const ApfThrottling = "API Priority and Fairness is rejecting requests at this priority level, which is what stuck watches holding seats cause (the rest of this report says whether they do)"

// statusMessage extracts metav1.Status.message from an error body, or the
// body's first line: the server's reason, one line (its first) of at most
// 200 bytes, kept as the server wrote it. It is escaped where it is
// printed (report.Escape on a terminal, JSON's own escapes in -o json),
// never here. An HTML page is named as one.
func statusMessage(body []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	s := ""
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		s = strings.TrimSpace(st.Message)
	} else {
		s = strings.TrimSpace(string(body))
		if looksHTML(s) {
			return "an HTML page, not a Kubernetes API answer (from a proxy or load balancer in front of the API server?)"
		}
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}

// looksHTML reports whether an answer's text is an HTML page.
func looksHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 64)])
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// LeasesRule is the rule that grants the list of the identity Leases.
func LeasesRule() Rule {
	return Rule{APIGroup: "coordination.k8s.io", Resource: "leases", Verb: "list"}
}
