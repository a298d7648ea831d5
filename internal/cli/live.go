package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	// Auth plugins (exec, OIDC, cloud providers) for kubeconfigs that use them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/report"
)

// defaultRequestTimeout applies to each fetch when --request-timeout is 0.
const defaultRequestTimeout = 60 * time.Second

// defaultMaxPause is --max-pause's default: the longest a debug=2 dump may
// stop the API server, estimated from the cheap look. Measured on a real
// kube-apiserver v1.37.2 (docs/diagnose.md "Production scale", make bench-live).
const defaultMaxPause = 250 * time.Millisecond

// LiveOptions are the flags every command that reads a cluster shares.
type LiveOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	APIServers  []string
	Samples     int
	Interval    time.Duration
	MaxPause    time.Duration
	// MaxGoroutines is deprecated by MaxPause; 0 means no limit.
	MaxGoroutines int
	Force         bool
	Verbose       int
	// Trace holds --evidence and --trace-budget (traceflags.go).
	Trace traceFlags

	// Clock is injected by tests; nil means the real clock.
	Clock clock.Clock

	notes []string // what config resolved that the user should know
}

func newLiveOptions() LiveOptions {
	return LiveOptions{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Samples:     2,
		Interval:    70 * time.Second,
		MaxPause:    defaultMaxPause,
		Trace:       newTraceFlags(),
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
	cmd.Flags().DurationVar(&o.MaxPause, "max-pause", o.MaxPause, "take the debug=2 goroutine dump (it stops the world in the API server while written) only when its pause, estimated from the debug=1 profile, is at most this; 0 means no limit")
	cmd.Flags().IntVar(&o.MaxGoroutines, "max-goroutines", o.MaxGoroutines, "refuse the goroutine dump of an instance running more goroutines than this, unless --force; 0 means no limit")
	_ = cmd.Flags().MarkDeprecated("max-goroutines", "it still works, but --max-pause bounds what a goroutine dump costs the server")
	cmd.Flags().BoolVar(&o.Force, "force", o.Force, "take the debug=2 goroutine dump whatever the cheap look and --max-pause say")
	addVerboseFlag(cmd, &o.Verbose)
}

// liveRunner is a live command's options: kubectl's Complete, Validate
// and Run.
type liveRunner interface {
	Complete() error
	Validate() error
	Run() error
}

// bindLive is the one construction the live commands share (diagnose, the
// bare command, collect): clk drives their sampling (nil: the real clock),
// lo's flags (the live ones, then --evidence and --trace-budget) are bound
// to cmd, and cmd's RunE writes the deprecation warnings of the flags given
// to errOut, then runs o's Complete, Validate and Run. The command adds its
// own flags after.
func bindLive(cmd *cobra.Command, lo *LiveOptions, clk clock.Clock, errOut io.Writer, o liveRunner) {
	lo.Clock = clk
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		warnDeprecated(cmd, errOut)
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run()
	}
	lo.addFlags(cmd)
	addTraceFlags(cmd, &lo.Trace)
}

// warnDeprecated says on w which deprecated flags were given: pflag
// prints its notice to the flag set's output, which cobra does not show.
func warnDeprecated(cmd *cobra.Command, w io.Writer) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Deprecated != "" {
			fmt.Fprintf(w, "Flag --%s has been deprecated, %s\n", f.Name, f.Deprecated)
		}
	})
}

// addVerboseFlag adds -v: bare, or with a level as kubectl users type it
// (-v=6); any level above 0 prints progress even with -o json|yaml.
func addVerboseFlag(cmd *cobra.Command, p *int) {
	cmd.Flags().IntVarP(p, "verbose", "v", *p, "print progress on stderr even with -o json|yaml (-v, or -v=N with N > 0)")
	cmd.Flags().Lookup("verbose").NoOptDefVal = "1"
}

// validate checks the flags bindLive bound: the live ones, then
// --evidence and --trace-budget.
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
	if o.MaxPause < 0 {
		return fmt.Errorf("invalid --max-pause %s: must not be negative (0 means no limit)", o.MaxPause)
	}
	return o.Trace.validate()
}

// config resolves the kubeconfig and flags into the engine's Config.
func (o *LiveOptions) config(progress io.Writer) (model.Config, error) {
	if err := checkRequestTimeout(o.ConfigFlags); err != nil {
		return model.Config{}, err
	}
	o.notes = kubeconfigNotes(o.ConfigFlags)
	rc, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return model.Config{}, fmt.Errorf("no cluster to read: %w (set --kubeconfig or --context, or use analyze on saved files)", err)
	}
	servers := make([]string, 0, len(o.APIServers))
	for _, a := range o.APIServers {
		addr, err := normalizeAddress(a, rc.Host)
		if err != nil {
			return model.Config{}, err
		}
		servers = append(servers, addr)
	}
	timeout := rc.Timeout
	if timeout == 0 {
		timeout = defaultRequestTimeout
	}
	clk := o.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return model.Config{
		REST: rc, APIServers: servers, Samples: o.Samples, Interval: o.Interval,
		RequestTimeout: timeout, MaxPause: o.MaxPause, MaxGoroutines: o.MaxGoroutines, Force: o.Force,
		Clock: clk, Progress: escapedProgress(progress),
		Words: english.Words{APIServers: "--apiserver", Interval: "--interval", RequestTimeout: "--request-timeout", MaxPause: "--max-pause", Evidence: "--evidence", TraceBudget: "--trace-budget", Force: "--force"},
		Trace: o.Trace.config(),
	}, nil
}

// normalizeAddress reads an --apiserver value: "10.0.0.1", "10.0.0.1:6443", "[::1]:6443" or a
// URL; it returns host:port (the port of the kubeconfig host by default).
func normalizeAddress(a, server string) (string, error) {
	if u, err := url.Parse(a); err == nil && u.Scheme != "" && u.Host != "" {
		a = u.Host
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		host, port = a, ""
		if u, err := url.Parse(server); err == nil {
			port = u.Port()
		}
		if port == "" {
			port = "443"
		}
	}
	if host == "" {
		return "", fmt.Errorf("invalid --apiserver %q: want HOST or HOST:PORT", a)
	}
	if n, err := strconv.ParseUint(port, 10, 64); err != nil {
		return "", fmt.Errorf("invalid --apiserver %q: port %q is not a number", a, port)
	} else if n < 1 || n > 65535 {
		return "", fmt.Errorf("invalid --apiserver %q: port %q is out of range: use 1 to 65535", a, port)
	}
	return net.JoinHostPort(host, port), nil
}

// signalContext is canceled on SIGINT/SIGTERM.
func signalContext() (context.Context, context.CancelFunc) { return interruptContext() }

// instanceErrors flattens per-instance errors for the report and stderr,
// and prints the missing RBAC rules once when a request was refused.
func instanceErrors(res *live.Result, errOut io.Writer) []string {
	var out []string
	for _, ir := range res.Instances {
		out = append(out, instanceWords(ir)...)
	}
	printErrors(errOut, out, refused(res))
	return out
}

// instanceWords are the errors of one instance in our words, naming the
// flags; none once interrupted (canceled requests are no failures:
// execute says so).
func instanceWords(ir model.InstanceResult) []string {
	if wasInterrupted() != nil {
		return nil
	}
	var out []string
	for _, err := range explainNotFound(ir) {
		out = append(out, phrase(err))
	}
	return out
}

// refused reports whether RBAC refused a request of the run (not once
// interrupted, as instanceWords).
func refused(res *live.Result) bool {
	if res == nil || wasInterrupted() != nil {
		return false
	}
	for _, ir := range res.Instances {
		for _, err := range ir.Errors {
			if model.IsForbidden(err) {
				return true
			}
		}
	}
	return false
}

// printErrors says on errOut which requests failed, and when RBAC refused
// some, the rules watch-doctor needs.
func printErrors(errOut io.Writer, errs []string, forbidden bool) {
	if len(errs) > 0 {
		fmt.Fprintf(errOut, "%d request(s) failed:\n", len(errs))
		for _, e := range engine.Summarize(errs) {
			fmt.Fprintf(errOut, "  - %s\n", report.Escape(e))
		}
	}
	if forbidden {
		fmt.Fprintf(errOut, "some requests were refused by RBAC. watch-doctor needs read access to:\n")
		for _, r := range model.Rules() {
			fmt.Fprintf(errOut, "  - %s\n", r)
		}
		fmt.Fprintf(errOut, "This ClusterRole grants exactly that (deploy/rbac.yaml); bind it to your user:\n\n%s\n", indent(model.ClusterRole, "  "))
	}
}

// engineConfig is the engine's Config of a command reading the cluster:
// the live config, the diagnosis' options and our words for what the
// report says.
func (o *LiveOptions) engineConfig(progress io.Writer) (engine.Config, error) {
	lc, err := o.config(progress)
	if err != nil {
		return engine.Config{}, err
	}
	maxPause := o.MaxPause
	return engine.Config{
		Live: lc, Diagnosis: diagnoseOptions(captureSlack), Notes: o.notes,
		Phrasing: engine.Phrasing{Errors: instanceWords, Withheld: func(w *model.PauseBudgetError) string { return withheldWords(w, maxPause) }},
	}, nil
}

// printRun says on errOut the run's notes (as warnings) and its failed
// requests: the report carries them too, and a script reading -o json
// may not show anyone.
func printRun(errOut io.Writer, res *engine.Result) {
	for _, n := range res.Notes {
		fmt.Fprintf(errOut, "warning: %s\n", report.Escape(n))
	}
	printErrors(errOut, res.Errors, refused(res.Run))
}

// escapedProgress escapes the progress lines written to w; nil stays nil
// (no progress).
func escapedProgress(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return report.EscapeWriter(w)
}

// phrase turns an engine's typed error into advice naming the flags.
func phrase(err error) string {
	var le *model.GoroutineLimitError
	if errors.As(err, &le) {
		if math.IsNaN(le.Goroutines) {
			return fmt.Sprintf("%s: go_goroutines could not be read from /metrics, so the goroutine dump (which stops the world in the API server while it is written) cannot be checked against --max-goroutines %d: pass --force to take it anyway", le.Instance, le.Limit)
		}
		return fmt.Sprintf("%s: go_goroutines is %.0f, above --max-goroutines %d: a debug=2 dump stops the world in the API server while it is written; pass --force to take it anyway", le.Instance, le.Goroutines, le.Limit)
	}
	return err.Error()
}

// withheldWords says, of a goroutine dump not taken for the pause
// budget, what it would cost and which flags take it anyway.
func withheldWords(w *model.PauseBudgetError, maxPause time.Duration) string {
	if !w.Estimate.Known() {
		// Neither /metrics nor the debug=1 profile answered: the server
		// may be down or sick, no place for a stop-the-world dump. Say
		// so, do not advise --force.
		return fmt.Sprintf("%s; fix those fetches first (see the errors)", w.Error())
	}
	if w.Refused != "" {
		return fmt.Sprintf("%s; --force takes it anyway: it decides stuck or slow", w.Error())
	}
	return fmt.Sprintf("%s; --force takes it anyway, or raise --max-pause (now %s)", w.Error(), maxPause)
}

// forceHint is appended to an incomplete result whose goroutine dumps
// were withheld.
const forceHint = "pass --force to take the goroutine dump anyway (or raise --max-pause): it decides stuck or slow"

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

// errNoInstance: no instance could be read at all.
var errNoInstance = engine.ErrNoInstance
