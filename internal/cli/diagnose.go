package cli

import (
	"errors"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/engine"
	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const diagnoseExample = `  # Every API server of the current context, sampled twice 70 s apart
  kubectl watch-doctor diagnose

  # A quick look: one sample (stuck only when blocked a minute or more)
  kubectl watch-doctor diagnose --samples 1

  # One instance behind a load balancer, as JSON for a script
  kubectl watch-doctor diagnose --apiserver 10.0.0.12:6443 -o json`

// DiagnoseOptions holds the flags of `diagnose` (and of the bare command).
type DiagnoseOptions struct {
	genericiooptions.IOStreams
	LiveOptions
	Fleet FleetOptions

	Output    string
	NoHeaders bool
	FailOn    string
	// AuditLogs are --audit-log.
	AuditLogs []string

	printer printer
	failOn  string
}

// NewDiagnoseOptions returns options with defaults.
func NewDiagnoseOptions(streams genericiooptions.IOStreams) *DiagnoseOptions {
	return &DiagnoseOptions{IOStreams: streams, LiveOptions: newLiveOptions(), Fleet: newFleetOptions(), Output: string(report.FormatTable), FailOn: string(api.SeverityCritical)}
}

// NewCmdDiagnose builds `kubectl watch-doctor diagnose`.
func NewCmdDiagnose(streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdDiagnose(streams, nil)
}

func newCmdDiagnose(streams genericiooptions.IOStreams, clk clock.Clock) *cobra.Command {
	o := NewDiagnoseOptions(streams)
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Diagnose the watches of every API server of a cluster, live (the default command)",
		Long: `Read each API server instance of the cluster separately and concurrently
(discovered from the default/kubernetes EndpointSlices and reached on its own
address, or given with --apiserver), twice --interval apart, and report stuck
watches and the clients holding them. It only reads.

Each sample starts with a cheap look: /metrics, the APF dumps and the debug=1
goroutine profile. When no watch has been initializing for longer than 30s, that
is the whole answer and no goroutine dump is taken. Otherwise the debug=2 dump
(which stops the world in the API server while it is written) is taken only
when its pause, estimated from the profile, is within --max-pause. If not
(--evidence auto), the instance is traced for the interval instead
(/debug/pprof/trace: one stop-the-world of well under a millisecond): a 1 s
probe forecasts the trace's rate, --trace-budget bounds its bytes (the trace
stops at the budget, and the report says so), and the trace stops early once every suspect
has progressed. The trace shows per goroutine who made progress; the APF rows
of both samples name the clients, by elimination. When the server cannot be
traced (Go older than 1.22, a trace already running, a 403 or 404, a stream
cut short) a note says why and the suspects stay undecided; --force takes the
dump anyway. The summary says what the run cost each instance: its
stop-the-world pauses (go_sched_pauses_total_other_seconds) and the bytes read.

Needs get on /debug/pprof/*, /debug/api_priority_and_fairness/*, /metrics,
/version and list on endpointslices and leases (deploy/rbac.yaml).

` + exitCodesHelp,
		Example: diagnoseExample,
		Args:    cobra.NoArgs,
	}
	bindLive(cmd, &o.LiveOptions, clk, o.ErrOut, o)
	o.addFlags(cmd)
	return cmd
}

// addFlags binds diagnose's own flags, after bindLive's.
func (o *DiagnoseOptions) addFlags(cmd *cobra.Command) {
	o.Fleet.addFlags(cmd)
	addReportOutputFlag(cmd, &o.Output, &o.NoHeaders)
	addFailOnFlag(cmd, &o.FailOn)
	addAuditLogFlag(cmd, &o.AuditLogs, true)
}

// Complete resolves flags.
func (o *DiagnoseOptions) Complete() error {
	var err error
	if o.printer, err = toPrinter(o.Out, o.Output, o.NoHeaders, true); err != nil {
		return err
	}
	o.failOn, err = parseFailOn(o.FailOn)
	return err
}

// Validate checks flag values.
func (o *DiagnoseOptions) Validate() error {
	if err := o.LiveOptions.validate(); err != nil {
		return err
	}
	logs := o.AuditLogs
	if o.Fleet.enabled() {
		logs = contextLogFiles(logs)
	}
	return validateAuditLogs(logs, nil)
}

// Run samples the cluster, diagnoses and writes the report.
func (o *DiagnoseOptions) Run() error {
	if o.Fleet.enabled() {
		return o.runFleet()
	}
	logs, err := auditSources(o.AuditLogs, o.In)
	if err != nil {
		return err
	}
	cfg, err := o.engineConfig(o.progress(o.ErrOut))
	if err != nil {
		return err
	}
	cfg.AuditLogs = logs
	ctx, cancel := signalContext()
	defer cancel()
	res, err := engine.Run(ctx, cfg)
	if res.Report == nil {
		return err
	}
	printRun(o.ErrOut, res)
	if err != nil {
		return err
	}
	if err := writeReport(o.Out, res.Report, o.printer, o.failOn); err != nil {
		var ie *incompleteError
		if errors.As(err, &ie) && res.ForceAdvised() {
			ie.hint = forceHint
		}
		return err
	}
	return errIncomplete(res.Errors)
}

// progress is where progress lines go: w, or nowhere when the report is
// structured (-o json|yaml) and -v was not given.
func (o *DiagnoseOptions) progress(w io.Writer) io.Writer {
	if o.printer.Structured() && o.Verbose == 0 {
		return nil
	}
	return w
}

// captureSlack: live captures are timed by the server's Date header of the
// goroutine dump (1 s resolution), so ages are precise to a few seconds.
const captureSlack = 5 * time.Second
