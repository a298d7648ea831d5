package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	// Auth plugins (exec, OIDC, cloud providers) for kubeconfigs that use them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/pkg/live"
)

// defaultRequestTimeout applies to each fetch when --request-timeout is 0.
const defaultRequestTimeout = 60 * time.Second

// LiveOptions are the flags every command that reads a cluster shares.
type LiveOptions struct {
	ConfigFlags   *genericclioptions.ConfigFlags
	APIServers    []string
	Samples       int
	Interval      time.Duration
	MaxGoroutines int
	Force         bool
	Verbose       int

	// Clock is injected by tests; nil means the real clock.
	Clock clock.Clock

	notes []string // what config resolved that the user should know
}

func newLiveOptions() LiveOptions {
	return LiveOptions{
		ConfigFlags:   genericclioptions.NewConfigFlags(true),
		Samples:       2,
		Interval:      70 * time.Second,
		MaxGoroutines: 500000,
	}
}

func (o *LiveOptions) addFlags(cmd *cobra.Command) {
	// Watches are diagnosed cluster-wide: a namespace flag would do nothing.
	o.ConfigFlags.Namespace = nil
	o.ConfigFlags.AddFlags(cmd.Flags())
	if f := cmd.Flags().Lookup("request-timeout"); f != nil {
		f.Usage = "time limit of each request, reading the response included (e.g. 30s, 2m); 0 means 60s per request"
	}
	cmd.Flags().StringArrayVar(&o.APIServers, "apiserver", o.APIServers, "read this API server instance (HOST[:PORT], repeatable) instead of discovering them from the default/kubernetes EndpointSlices")
	cmd.Flags().IntVar(&o.Samples, "samples", o.Samples, "samples to take of each instance; the second tells stuck from slow (1 for a quick look)")
	cmd.Flags().DurationVar(&o.Interval, "interval", o.Interval, "time between samples; over a minute, so a stuck watch shows a longer wait")
	cmd.Flags().IntVar(&o.MaxGoroutines, "max-goroutines", o.MaxGoroutines, "refuse the goroutine dump (it stops the world in the API server) of an instance running more goroutines than this, unless --force")
	cmd.Flags().BoolVar(&o.Force, "force", o.Force, "take goroutine dumps even above --max-goroutines")
	addVerboseFlag(cmd, &o.Verbose)
}

// addVerboseFlag adds -v: bare, or with a level as kubectl users type it
// (-v=6); any level above 0 prints progress even with -o json|yaml.
func addVerboseFlag(cmd *cobra.Command, p *int) {
	cmd.Flags().IntVarP(p, "verbose", "v", *p, "print progress on stderr even with -o json|yaml (-v, or -v=N with N > 0)")
	cmd.Flags().Lookup("verbose").NoOptDefVal = "1"
}

func (o *LiveOptions) validate() error {
	if o.Samples < 1 {
		return fmt.Errorf("invalid --samples %d: at least 1", o.Samples)
	}
	if o.Samples > 1 && o.Interval <= 0 {
		return fmt.Errorf("invalid --interval %s: must be positive with --samples %d", o.Interval, o.Samples)
	}
	if o.MaxGoroutines < 0 {
		return fmt.Errorf("invalid --max-goroutines %d: must not be negative", o.MaxGoroutines)
	}
	return nil
}

// config resolves the kubeconfig and flags into the engine's Config.
func (o *LiveOptions) config(progress io.Writer) (live.Config, error) {
	if err := checkRequestTimeout(o.ConfigFlags); err != nil {
		return live.Config{}, err
	}
	o.notes = kubeconfigNotes(o.ConfigFlags)
	rc, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return live.Config{}, fmt.Errorf("no cluster to read: %w (set --kubeconfig or --context, or use analyze on saved files)", err)
	}
	timeout := rc.Timeout
	if timeout == 0 {
		timeout = defaultRequestTimeout
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return live.Config{
		REST: rc, APIServers: o.APIServers, Samples: o.Samples, Interval: o.Interval,
		RequestTimeout: timeout, MaxGoroutines: o.MaxGoroutines, Force: o.Force,
		Clock: clk, Progress: progress,
	}, nil
}

// signalContext is canceled on SIGINT/SIGTERM.
func signalContext() (context.Context, context.CancelFunc) { return interruptContext() }

// instanceErrors flattens per-instance errors for the report and stderr,
// and prints the missing RBAC rules once when a request was refused.
func instanceErrors(res *live.Result, errOut io.Writer) []string {
	if wasInterrupted() != nil {
		return nil // canceled requests are no failures: execute says so
	}
	explainNotFound(res)
	var out []string
	forbidden := false
	for _, ir := range res.Instances {
		for _, err := range ir.Errors {
			out = append(out, err.Error())
			if live.IsForbidden(err) {
				forbidden = true
			}
		}
	}
	if len(out) > 0 {
		fmt.Fprintf(errOut, "%d request(s) failed:\n", len(out))
		for _, e := range out {
			fmt.Fprintf(errOut, "  - %s\n", e)
		}
	}
	if forbidden {
		fmt.Fprintf(errOut, "some requests were refused by RBAC. watch-doctor needs read access to:\n")
		for _, r := range live.Rules {
			fmt.Fprintf(errOut, "  - %s\n", r)
		}
		fmt.Fprintf(errOut, "This ClusterRole grants exactly that (deploy/rbac.yaml); bind it to your user:\n\n%s\n", indent(live.ClusterRole, "  "))
	}
	return out
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// errIncomplete is returned when some instance could not be read fully.
func errIncomplete(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%d request(s) failed, the result is incomplete; first: %s", len(errs), errs[0])
}

var errNoInstance = errors.New("no API server instance could be read")
