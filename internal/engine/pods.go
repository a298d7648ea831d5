package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// lookupPods is live.LookupPods; a test may replace it.
var lookupPods = live.LookupPods

// attachPods names, on each finding whose client has source addresses
// (from its audit event), the pods holding them: a live run alone, as
// the pods are those of now. What could not be looked up is a warning.
func (r *Result) attachPods(ctx context.Context, cfg Config) {
	if r.Report == nil || cfg.Live.REST == nil {
		return
	}
	var ips []string
	for _, f := range r.Report.Findings {
		if f.Client != nil {
			ips = append(ips, f.Client.SourceIPs...)
		}
		for _, c := range f.Candidates {
			ips = append(ips, c.SourceIPs...)
		}
	}
	if len(ips) == 0 {
		return
	}
	if d := cfg.Live.RequestTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	l := podsFound(lookupPods(ctx, cfg.Live.REST, ips))
	for i := range r.Report.Findings {
		f := &r.Report.Findings[i]
		if f.Client != nil {
			f.Client.Pods = l.attach(f, "", f.Client.SourceIPs)
		}
		for j := range f.Candidates {
			c := &f.Candidates[j]
			c.Pods = l.attach(f, "candidate "+c.User+": ", c.SourceIPs)
		}
	}
	r.Report.Warnings = append(r.Report.Warnings, l.Notes...)
	diagnosis.Readvise(r.Report, cfg.Diagnosis.Words)
}

// podsFound is a pods lookup that attaches its pods to a finding.
type podsFound live.PodLookup

// attach returns the pods holding ips, saying so in f's evidence (each
// line prefixed, for a candidate).
func (l podsFound) attach(f *api.Finding, prefix string, ips []string) []api.Pod {
	var out []api.Pod
	for _, ip := range ips {
		pods, looked := l.Pods[ip]
		if !looked {
			continue
		}
		out = append(out, pods...)
		f.Evidence = append(f.Evidence, prefix+podEvidence(ip, pods, l.More[ip]))
	}
	return out
}

// podEvidence says which pods hold ip, and who else it could be.
func podEvidence(ip string, pods []api.Pod, more bool) string {
	if len(pods) == 0 {
		return fmt.Sprintf("no pod holds source address %s now: a node or a host outside the cluster, or a pod since gone", ip)
	}
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Namespace + "/" + p.Name
		if p.Owner != "" {
			names[i] += " (" + p.Owner + ")"
		}
	}
	switch {
	case more:
		return fmt.Sprintf("source address %s is held by more than %d pods, among them %s: any of them may hold the watch", ip, len(pods), strings.Join(names, ", "))
	case len(pods) > 1:
		why := ""
		if pods[0].HostNetwork {
			why = " (host network: they share their node's address)"
		}
		return fmt.Sprintf("source address %s is held by %d pods%s: %s; any of them may hold the watch", ip, len(pods), why, strings.Join(names, ", "))
	}
	return fmt.Sprintf("pod %s holds source address %s", names[0], ip)
}
