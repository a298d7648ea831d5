package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/exporter"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/report"
)

const serveExample = `  # In a pod, with the ServiceAccount of deploy/ (kubectl apply -k deploy/)
  kubectl watch-doctor serve --in-cluster

  # From a laptop, against the current context, looking every minute
  kubectl watch-doctor serve --listen-address 127.0.0.1:9090 --interval 1m

  # Count watches stuck or progressing: trace an undecided instance for 30 s,
  # at most every 10 minutes, reading at most 64 MiB of trace
  kubectl watch-doctor serve --trace-window 30s --trace-every 10m --trace-budget 64Mi`

// ServeOptions holds the flags of `serve`.
type ServeOptions struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags

	InCluster     bool
	APIServers    []string
	ListenAddress string
	Interval      time.Duration
	Jitter        float64
	MaxBackoff    time.Duration
	TopUsers      int
	MaxResources  int
	LogLevel      string
	TraceWindow   time.Duration
	TraceBudget   string
	TraceEvery    time.Duration

	cfg   exporter.Config
	level slog.Level
}

// NewServeOptions returns options with defaults.
func NewServeOptions(streams genericiooptions.IOStreams) *ServeOptions {
	return &ServeOptions{
		IOStreams: streams, ConfigFlags: genericclioptions.NewConfigFlags(true),
		Interval: exporter.DefaultInterval, Jitter: exporter.DefaultJitter,
		MaxBackoff: exporter.DefaultMaxBackoff, TopUsers: exporter.DefaultTopUsers,
		MaxResources: exporter.DefaultMaxResources, LogLevel: "info",
		TraceBudget: "128Mi", TraceEvery: exporter.DefaultTraceEvery,
	}
}

// NewCmdServe builds `kubectl watch-doctor serve`.
func NewCmdServe(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewServeOptions(streams)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Export the cheap look of every API server as Prometheus metrics, on an interval",
		Long: `Run the cheap look of diagnose (/metrics, the APF dumps, the debug=1 goroutine
profile: no debug=2 dump, ever) against every API server instance every
--interval, and serve what it found on /metrics for Prometheus, with /healthz
and /readyz (ready once a look has read an instance). Logs are JSON on stderr.
SIGTERM shuts it down gracefully.

Only an execution trace tells a stuck watch from a slow one once it has been
initializing for 30 s. With --trace-window, when a look leaves such watches
undecided on an instance (and it was not traced within --trace-every), the
instance is looked at again with a trace of that window between two samples,
as diagnose --evidence trace does (a 1 s rate probe, --trace-budget bounding
the bytes; one stop-the-world of well under a millisecond), and the trace's
stuck and progressing counts are exported. Off by default.

Metrics, labels and their bounds: docs/serve.md. Alerts, dashboard and the
manifests: deploy/ (kubectl apply -k deploy/). Needs the read-only rules of
deploy/rbac.yaml.`,
		Example: serveExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			cmd.SilenceUsage = true
			return o.Run()
		},
	}
	o.ConfigFlags.Namespace = nil
	o.ConfigFlags.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.BoolVar(&o.InCluster, "in-cluster", o.InCluster, "use the pod's ServiceAccount (rest.InClusterConfig) instead of a kubeconfig")
	f.StringArrayVar(&o.APIServers, "apiserver", o.APIServers, "look at this API server instance (HOST[:PORT], repeatable) instead of discovering them from the default/kubernetes EndpointSlices")
	f.StringVar(&o.ListenAddress, "listen-address", o.ListenAddress, "address to serve /metrics, /healthz and /readyz on; by default "+localAddress+" (this host alone), or "+podAddress+" in a pod (KUBERNETES_SERVICE_HOST set), where Prometheus scrapes it")
	f.DurationVar(&o.Interval, "interval", o.Interval, "time between looks")
	f.Float64Var(&o.Jitter, "jitter", o.Jitter, "spread of the interval, as a fraction (0.1: 0.9 to 1.1 intervals)")
	f.DurationVar(&o.MaxBackoff, "max-backoff", o.MaxBackoff, "longest wait after looks that read nothing (the wait doubles from --interval)")
	f.IntVar(&o.TopUsers, "top-users", o.TopUsers, "(user, resource) rows exported per instance, by seats held; the rest are summed into user=\"other\"")
	f.IntVar(&o.MaxResources, "max-resources", o.MaxResources, "(resource, priority level) rows exported per instance; the rest are summed into resource=\"other\"")
	f.StringVar(&o.LogLevel, "log-level", o.LogLevel, "least level logged: debug, info, warn or error")
	f.DurationVar(&o.TraceWindow, "trace-window", o.TraceWindow, "trace an instance for this long (/debug/pprof/trace, between two samples) when a look leaves watches undecided, to count them stuck or progressing; 0 never traces")
	f.StringVar(&o.TraceBudget, "trace-budget", o.TraceBudget, "the most bytes of execution trace read from an API server per trace; the trace stops at a generation's end when the next would not fit, and the look says so")
	f.DurationVar(&o.TraceEvery, "trace-every", o.TraceEvery, "least time between two traces of an instance (at least --trace-window); a trace's decision is carried between them while the same watches are initializing")
	return cmd
}

// Complete resolves the flags into the exporter's Config.
func (o *ServeOptions) Complete() error {
	if err := o.level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return fmt.Errorf("unsupported --log-level %q: use one of debug, info, warn, error", o.LogLevel)
	}
	if err := checkRequestTimeout(o.ConfigFlags); err != nil {
		return err
	}
	rc, err := o.restConfig()
	if err != nil {
		return err
	}
	servers := make([]string, 0, len(o.APIServers))
	for _, a := range o.APIServers {
		addr, err := normalizeAddress(a, rc.Host)
		if err != nil {
			return err
		}
		servers = append(servers, addr)
	}
	budget, err := parseTraceBudget(o.TraceBudget)
	if err != nil {
		return err
	}
	timeout := rc.Timeout
	if timeout == 0 {
		timeout = defaultRequestTimeout
	}
	o.cfg = exporter.Config{
		Live: model.Config{
			REST: rc, APIServers: servers, RequestTimeout: timeout,
			Words: english.Words{APIServers: "--apiserver", Interval: "--interval", RequestTimeout: "--request-timeout", TraceBudget: "--trace-budget"},
		},
		Trace:    exporter.TraceConfig{Window: o.TraceWindow, Budget: budget, Every: o.TraceEvery},
		Interval: o.Interval, Jitter: o.Jitter, MaxBackoff: o.MaxBackoff,
		TopUsers: o.TopUsers, MaxResources: o.MaxResources,
		Logger: slog.New(slog.NewJSONHandler(report.JSONLines(o.ErrOut), &slog.HandlerOptions{Level: o.level})),
	}
	return nil
}

func (o *ServeOptions) restConfig() (*rest.Config, error) {
	if o.InCluster {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--in-cluster: %w (run in a pod with a ServiceAccount, or drop --in-cluster to use a kubeconfig)", err)
		}
		if o.ConfigFlags.Timeout != nil && *o.ConfigFlags.Timeout != "" && *o.ConfigFlags.Timeout != "0" {
			if rc.Timeout, err = parseTimeout(*o.ConfigFlags.Timeout); err != nil {
				return nil, err
			}
		}
		return rc, nil
	}
	rc, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("no cluster to read: %w (set --kubeconfig or --context, or --in-cluster in a pod)", err)
	}
	return rc, nil
}

// parseTimeout reads --request-timeout as client-go does: seconds or a
// duration (checkRequestTimeout validated it).
func parseTimeout(s string) (time.Duration, error) {
	if strings.Trim(s, "0123456789") == "" {
		s += "s"
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid --request-timeout %q: %w", s, err)
	}
	return d, nil
}

// Validate checks flag values.
func (o *ServeOptions) Validate() error {
	switch {
	case o.Interval <= 0:
		return fmt.Errorf("invalid --interval %s: must be positive", o.Interval)
	case o.Jitter < 0 || o.Jitter >= 1:
		return fmt.Errorf("invalid --jitter %g: want at least 0 and below 1", o.Jitter)
	case o.MaxBackoff < o.Interval:
		return fmt.Errorf("invalid --max-backoff %s: must be at least --interval %s", o.MaxBackoff, o.Interval)
	case o.TopUsers < 1:
		return fmt.Errorf("invalid --top-users %d: at least 1", o.TopUsers)
	case o.MaxResources < 1:
		return fmt.Errorf("invalid --max-resources %d: at least 1", o.MaxResources)
	case o.TraceWindow < 0 || (o.TraceWindow > 0 && o.TraceWindow < 2*time.Second):
		return fmt.Errorf("invalid --trace-window %s: 0 (never trace) or at least 2s", o.TraceWindow)
	case o.TraceWindow > 0 && o.TraceEvery < o.TraceWindow:
		return fmt.Errorf("invalid --trace-every %s: must be at least --trace-window %s", o.TraceEvery, o.TraceWindow)
	}
	return nil
}

// Run serves until SIGTERM or SIGINT, then shuts down gracefully (exit 0).
func (o *ServeOptions) Run() error {
	e, err := exporter.New(o.cfg)
	if err != nil {
		return err
	}
	addr := listenAddress(o.ListenAddress)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("invalid --listen-address %q: %w", addr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return e.Serve(ctx, l)
}

// The default addresses of serve: what it serves names the API servers,
// their users and resources, so outside a pod it listens on this host
// alone; in a pod, on every interface, where Prometheus scrapes it (and a
// NetworkPolicy or kube-rbac-proxy guards it: docs/serve.md).
const (
	localAddress = "127.0.0.1:8080"
	podAddress   = ":8080"
)

// listenAddress is --listen-address, or its default: podAddress in a pod
// (KUBERNETES_SERVICE_HOST set), localAddress elsewhere.
func listenAddress(flag string) string {
	switch {
	case flag != "":
		return flag
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		return podAddress
	}
	return localAddress
}
