package cli

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/bundle"
	"github.com/watch-doctor/watch-doctor/internal/live"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

const metricsExample = `  # Watch metrics of every API server, per resource and priority level
  kubectl watch-doctor metrics

  # Rates: two samples 30 s apart
  kubectl watch-doctor metrics --interval 30s

  # From saved /metrics files (two captures of one server give rates)
  kubectl watch-doctor metrics ./t1/metrics.txt ./t2/metrics.txt -o yaml`

// MetricsOptions holds the flags of `metrics`.
type MetricsOptions struct {
	genericiooptions.IOStreams

	ConfigFlags *genericclioptions.ConfigFlags
	APIServers  []string
	Interval    time.Duration
	Output      string
	NoHeaders   bool
	Verbose     int
	Paths       []string

	Clock   clock.Clock
	printer printer
}

// NewMetricsOptions returns options with defaults.
func NewMetricsOptions(streams genericiooptions.IOStreams) *MetricsOptions {
	return &MetricsOptions{IOStreams: streams, ConfigFlags: genericclioptions.NewConfigFlags(true), Output: string(report.FormatTable)}
}

// NewCmdMetrics builds `kubectl watch-doctor metrics`.
func NewCmdMetrics(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdMetrics(streams, nil)
}

func newCmdMetrics(streams genericiooptions.IOStreams, clk clock.Clock) *cobra.Command {
	o := NewMetricsOptions(streams)
	o.Clock = clk
	cmd := &cobra.Command{
		Use:   "metrics [PATH...]",
		Short: "Watch-related metrics of every API server, per resource and priority level",
		Long: `Show the watch health of each API server from its /metrics: watchers, initial
events, watchers terminated as unresponsive, events dispatched and watch cache
capacity per resource, and APF seats per priority level. Metric names and
labels are read as the server's release (1.30 to 1.37) names them.

Without PATH it reads every API server of the cluster like diagnose (pinned
to each instance); with PATH it reads saved /metrics files or capture
directories. With --interval (live) or two captures of one server (files),
counters become rates per second; a restart between samples is detected
(no negative rates).

Metrics a release does not expose are listed, never shown as zero.

` + exitCodesHelp,
		Example: metricsExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.ConfigFlags.Namespace = nil
	o.ConfigFlags.AddFlags(cmd.Flags())
	cmd.Flags().StringArrayVar(&o.APIServers, "apiserver", o.APIServers, "read this API server instance (HOST[:PORT], repeatable) instead of discovering them")
	cmd.Flags().DurationVar(&o.Interval, "interval", o.Interval, "take a second sample this much later and show rates per second (live only; 0: one sample)")
	addVerboseFlag(cmd, &o.Verbose)
	addOutputFlag(cmd, &o.Output, &o.NoHeaders)
	return cmd
}

// Complete resolves flags and arguments.
func (o *MetricsOptions) Complete(args []string) error {
	o.Paths = args
	var err error
	o.printer, err = toPrinter(o.Out, o.Output, o.NoHeaders, false)
	return err
}

// Validate checks flag combinations.
func (o *MetricsOptions) Validate() error {
	if o.Interval < 0 {
		return fmt.Errorf("invalid --interval %s: must not be negative", o.Interval)
	}
	if len(o.Paths) > 0 && o.Interval > 0 {
		return errors.New("--interval applies to live reads; for files, give two captures of the same server")
	}
	return nil
}

// Run reads the metrics and writes the report.
func (o *MetricsOptions) Run() error {
	var r metrics.Report
	var errs []string
	if len(o.Paths) > 0 {
		loaded, err := bundle.Load(o.Paths, bundle.Options{Stdin: o.In})
		if err != nil {
			return err
		}
		for _, w := range loaded.Warnings {
			fmt.Fprintf(o.ErrOut, "warning: %s\n", report.Escape(w))
		}
		r = metricsReport(loaded, nil)
	} else {
		var err error
		if r, errs, err = o.live(); err != nil {
			return err
		}
	}
	if len(r.APIServers) == 0 {
		return errors.New("no /metrics found in the inputs")
	}
	if err := o.printer.Print(o.Out, r); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	return errIncomplete(errs)
}

func (o *MetricsOptions) live() (metrics.Report, []string, error) {
	var progress io.Writer = o.ErrOut
	if o.printer.Structured() && o.Verbose == 0 {
		progress = nil
	}
	lo := LiveOptions{ConfigFlags: o.ConfigFlags, APIServers: o.APIServers, Samples: 1, Clock: o.Clock}
	if o.Interval > 0 {
		lo.Samples, lo.Interval = 2, o.Interval
	}
	cfg, err := lo.config(progress)
	if err != nil {
		return metrics.Report{}, nil, err
	}
	// /version too: what it says is checked against kubernetes_build_info,
	// as diagnose checks it.
	cfg.Only = []api.FileKind{api.FileMetrics, api.FileVersion}
	ctx, cancel := signalContext()
	defer cancel()
	target := live.NewCaptures()
	res, err := live.Run(ctx, cfg, target)
	if err != nil {
		return metrics.Report{}, nil, err
	}
	errs := instanceErrors(res, o.ErrOut)
	notes := map[string][]string{}
	for _, ir := range res.Instances {
		notes[ir.Instance.Name] = ir.Notes
		for _, n := range ir.Notes {
			fmt.Fprintf(o.ErrOut, "warning: %s: %s\n", report.Escape(ir.Instance.Name), report.Escape(n))
		}
	}
	r := metricsReport(target.Loaded(res), notes)
	for _, ir := range res.Instances {
		if ir.Failed() && len(ir.Errors) > 0 {
			r.APIServers = append(r.APIServers, metrics.APIServer{Name: ir.Instance.Name, Err: ir.Errors[0]})
		}
	}
	return r, errs, nil
}

// metricsReport builds the report from captures grouped per server: the
// last sample's snapshot, and rates when there are two or more. notes are
// the run's notes per instance name (a /version contradicting
// kubernetes_build_info), given to each server of that instance, matched
// by the group's instance field; nil for files.
func metricsReport(l *bundle.Loaded, notes map[string][]string) metrics.Report {
	var r metrics.Report
	for _, g := range l.Processes() {
		var snaps []*metrics.Snapshot
		for _, c := range g.Captures {
			if c.Metrics != nil {
				c.Metrics.CapturedAt = c.CapturedAt
				snaps = append(snaps, c.Metrics)
			}
		}
		if len(snaps) == 0 {
			continue
		}
		a := metrics.APIServer{Name: g.Name, Snapshot: snaps[len(snaps)-1]}
		if g.Instance != "" {
			a.Snapshot.Notes = append(a.Snapshot.Notes, notes[g.Instance]...)
		}
		if len(snaps) >= 2 {
			first, last := snaps[len(snaps)-2], snaps[len(snaps)-1]
			rates, err := metrics.Rates(first, last, 0)
			if err != nil {
				a.Snapshot.Notes = append(a.Snapshot.Notes, fmt.Sprintf("no rates: %v", err))
			} else {
				a.Rates = rates
			}
		}
		r.APIServers = append(r.APIServers, a)
	}
	return r
}
