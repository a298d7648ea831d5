package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// diagnoseOptions are the diagnosis options of every command, with the
// command lines and flags its warnings and advice point at.
func diagnoseOptions(captureSlack time.Duration) diagnosis.Options {
	return diagnosis.Options{
		CaptureSlack: captureSlack,
		Words:        english.Words{Resample: "diagnose --interval 3m30s", CapturedAt: "--captured-at"},
	}
}

// checkRequestTimeout blames a bad --request-timeout on the flag, not on
// the kubeconfig (client-go's own message names neither). It accepts what
// client-go accepts: a bare integer of seconds or a duration.
func checkRequestTimeout(cf *genericclioptions.ConfigFlags) error {
	if cf == nil || cf.Timeout == nil || *cf.Timeout == "" {
		return nil
	}
	s := *cf.Timeout
	if _, err := strconv.Atoi(s); err == nil {
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d < 0 {
		return fmt.Errorf("invalid --request-timeout %q: use a duration like 30s or 2m, or 0 for 60s per request", s)
	}
	return nil
}

// kubeconfigNotes says, as kubectl does when it reaches a server, what
// was used when no kubeconfig was found: client-go falls back to
// http://localhost:8080 without a word.
func kubeconfigNotes(cf *genericclioptions.ConfigFlags) []string {
	if cf == nil || cf.APIServer != nil && *cf.APIServer != "" {
		return nil
	}
	raw, err := cf.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 {
		return nil
	}
	rc, err := cf.ToRESTConfig()
	if err != nil || rc.Host == "" {
		return nil
	}
	return []string{fmt.Sprintf("no kubeconfig found (KUBECONFIG, --kubeconfig, ~/.kube/config) and not in a pod: using %s, as kubectl does; set --kubeconfig or --context to read a cluster", rc.Host)}
}

// explainNotFound returns the errors of ir, replaced by one when it
// answered 404 to every request: it is not a Kubernetes API server (a web
// server, a wrong path prefix), and each 404 read alone would claim
// profiling or API Priority and Fairness disabled.
func explainNotFound(ir model.InstanceResult) []error {
	if len(ir.Errors) == 0 {
		return nil
	}
	all404 := true
	for _, s := range ir.Samples {
		for _, fi := range s.Fetches {
			if fi.Error == "" {
				all404 = false // it served something
			}
		}
	}
	for _, err := range ir.Errors {
		var he *model.HTTPError
		var pe *model.ProfilingDisabledError
		switch {
		case errors.As(err, &he) && he.Status == http.StatusNotFound, errors.As(err, &pe):
		case strings.Contains(err.Error(), "go_goroutines could not be read"), strings.Contains(err.Error(), "/metrics failed"):
			// Follows from the 404 on /metrics.
		default:
			all404 = false
		}
	}
	if all404 {
		return []error{fmt.Errorf("%s: every request answered 404 (/metrics, /version, /debug/...): this is not a Kubernetes API server; check the kubeconfig's server URL (path included) or --apiserver", ir.Instance.Name)}
	}
	return ir.Errors
}
