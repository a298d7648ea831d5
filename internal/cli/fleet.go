package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/live"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// FleetOptions are diagnose's flags for reading many clusters at once: a
// scripted audit over kubeconfig contexts, one report, one exit code.
type FleetOptions struct {
	Contexts       []string
	AllContexts    bool
	Parallel       int
	ClusterTimeout time.Duration
}

func newFleetOptions() FleetOptions {
	return FleetOptions{Parallel: 4, ClusterTimeout: 5 * time.Minute}
}

func (f *FleetOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringSliceVar(&f.Contexts, "contexts", f.Contexts, "diagnose each of these kubeconfig contexts (comma-separated) into one report with a CLUSTER column and one exit code")
	cmd.Flags().BoolVar(&f.AllContexts, "all-contexts", f.AllContexts, "diagnose every context of the kubeconfig (like --contexts with all of them)")
	cmd.Flags().IntVar(&f.Parallel, "parallel", f.Parallel, "with --contexts or --all-contexts: clusters read at the same time")
	cmd.Flags().DurationVar(&f.ClusterTimeout, "cluster-timeout", f.ClusterTimeout, "with --contexts or --all-contexts: time limit for each cluster, so one slow cluster does not hold the others back")
}

// enabled reports whether a fleet run was asked for.
func (f *FleetOptions) enabled() bool { return len(f.Contexts) > 0 || f.AllContexts }

func (f *FleetOptions) validate(cf *genericclioptions.ConfigFlags) error {
	switch {
	case len(f.Contexts) > 0 && f.AllContexts:
		return errors.New("--contexts and --all-contexts given: use one")
	case cf.Context != nil && *cf.Context != "":
		return errors.New("--context and --contexts/--all-contexts given: list every context in --contexts")
	case f.Parallel < 1:
		return fmt.Errorf("invalid --parallel %d: at least 1", f.Parallel)
	case f.ClusterTimeout <= 0:
		return fmt.Errorf("invalid --cluster-timeout %s: must be positive, like 5m", f.ClusterTimeout)
	}
	for _, c := range f.Contexts {
		if strings.TrimSpace(c) == "" {
			return errors.New("invalid --contexts: an empty context name")
		}
	}
	return nil
}

// resolve returns the contexts to read, checked against the kubeconfig.
func (f *FleetOptions) resolve(cf *genericclioptions.ConfigFlags) ([]string, error) {
	raw, err := cf.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	var known []string
	for name := range raw.Contexts {
		known = append(known, name)
	}
	sort.Strings(known)
	if f.AllContexts {
		if len(known) == 0 {
			return nil, errors.New("--all-contexts: the kubeconfig has no contexts (set --kubeconfig or KUBECONFIG)")
		}
		return known, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range f.Contexts {
		c = strings.TrimSpace(c)
		if _, ok := raw.Contexts[c]; !ok {
			return nil, fmt.Errorf("invalid --contexts: no context %q in the kubeconfig: use one of %s", c, strings.Join(known, ", "))
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// runFleet diagnoses every context with at most Parallel at a time, each
// within ClusterTimeout, and writes one report. The exit code is over all
// clusters: 2 when any could not be read fully, else 1 when any finding
// reaches --fail-on.
func (o *DiagnoseOptions) runFleet() error {
	if err := o.Fleet.validate(o.ConfigFlags); err != nil {
		return err
	}
	contexts, err := o.Fleet.resolve(o.ConfigFlags)
	if err != nil {
		return err
	}
	logs, err := contextAuditLogs(o.AuditLogs, contexts, o.In)
	if err != nil {
		return err
	}
	raw, _ := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
	ctx, cancel := signalContext()
	defer cancel()
	var errMu sync.Mutex
	clusters := make([]api.ClusterReport, len(contexts))
	sem := make(chan struct{}, o.Fleet.Parallel)
	var wg sync.WaitGroup
	for i, name := range contexts {
		clusters[i].Context = name
		if c := raw.Contexts[name]; c != nil {
			clusters[i].Cluster = c.Cluster
			if cl := raw.Clusters[c.Cluster]; cl != nil {
				clusters[i].Server = live.RedactServer(cl.Server)
			}
		}
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				clusters[i].Error = "not read: interrupted"
				return
			}
			errOut := &prefixWriter{mu: &errMu, w: o.ErrOut, prefix: "[" + name + "] "}
			cctx, ccancel := context.WithTimeout(ctx, o.Fleet.ClusterTimeout)
			defer ccancel()
			r, err := o.diagnoseContext(cctx, name, logs[name], errOut)
			clusters[i].Report = r
			if err != nil {
				if errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
					err = fmt.Errorf("not read within --cluster-timeout %s: %w", o.Fleet.ClusterTimeout, err)
				}
				clusters[i].Error = err.Error()
			}
			errOut.flush()
		}(i, name)
	}
	wg.Wait()
	fr := api.NewFleetReport(clusters)
	if err := o.printer.Print(o.Out, fr); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if fr.Summary.Failed > 0 {
		var failed []string
		for _, c := range clusters {
			if c.Error != "" {
				failed = append(failed, c.Context)
			}
		}
		return fmt.Errorf("%d of %d cluster(s) not read fully (%s): the report is incomplete", len(failed), len(clusters), strings.Join(failed, ", "))
	}
	if o.failOn != failOnNone {
		for _, c := range clusters {
			if c.Report != nil && c.Report.MaxSeverity().Rank() >= api.Severity(o.failOn).Rank() {
				return errFindings
			}
		}
	}
	return fleetUndecided(clusters)
}

// fleetUndecided fails a fleet run where some cluster's report left
// watches undecided: undecided is not healthy, as in diagnose.
func fleetUndecided(clusters []api.ClusterReport) error {
	var reasons []string
	for _, c := range clusters {
		if c.Report != nil {
			for _, r := range c.Report.Incomplete {
				reasons = append(reasons, "["+c.Context+"] "+r)
			}
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	return &incompleteError{reasons: reasons}
}

// diagnoseContext reads one context as diagnose reads the current one:
// the same engine call, so the report is the same.
func (o *DiagnoseOptions) diagnoseContext(ctx context.Context, name string, logs []bundle.AuditSource, errOut io.Writer) (*api.Report, error) {
	lo := o.LiveOptions
	lo.ConfigFlags = contextFlags(o.ConfigFlags, name)
	cfg, err := lo.engineConfig(o.progress(errOut))
	if err != nil {
		return nil, err
	}
	cfg.AuditLogs = logs
	res, err := engine.Run(ctx, cfg)
	if res.Report == nil {
		return nil, err
	}
	printRun(errOut, res)
	if err != nil {
		return nil, err
	}
	return res.Report, errIncomplete(res.Errors)
}

// contextFlags copies the kubeconfig flags the user gave, aimed at one
// context.
func contextFlags(cf *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	out := genericclioptions.NewConfigFlags(false)
	out.KubeConfig, out.Timeout, out.Insecure = cf.KubeConfig, cf.Timeout, cf.Insecure
	out.CAFile, out.CertFile, out.KeyFile, out.BearerToken = cf.CAFile, cf.CertFile, cf.KeyFile, cf.BearerToken
	out.Impersonate, out.ImpersonateUID, out.ImpersonateGroup = cf.Impersonate, cf.ImpersonateUID, cf.ImpersonateGroup
	out.TLSServerName, out.DisableCompression = cf.TLSServerName, cf.DisableCompression
	out.Context = &name
	return out
}

// prefixWriter prefixes every line with the cluster's name and writes
// whole lines only, under a lock shared by all clusters, so the stderr of
// concurrent clusters never interleaves within a line.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    bytes.Buffer
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf.Write(b)
	for {
		line, err := p.buf.ReadBytes('\n')
		if err != nil {
			// An incomplete line waits for the rest.
			rest := append([]byte(nil), line...)
			p.buf.Reset()
			p.buf.Write(rest)
			return len(b), nil
		}
		p.mu.Lock()
		_, werr := fmt.Fprintf(p.w, "%s%s", p.prefix, line)
		p.mu.Unlock()
		if werr != nil {
			return 0, werr
		}
	}
}

// flush writes a last line without a newline.
func (p *prefixWriter) flush() {
	if p.buf.Len() > 0 {
		p.Write([]byte("\n"))
	}
}
