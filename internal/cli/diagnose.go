package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/live"
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
	o.Clock = clk
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
probe measures the trace's rate, --trace-budget bounds its bytes (the window is
shortened to fit, and said so), and the trace stops early once every suspect
has progressed. The trace shows per goroutine who made progress; the APF rows
of both samples name the clients, by elimination. When the server cannot be
traced (Go older than 1.22, a trace already running, a 403 or 404, a stream
cut short) a note says why and the suspects stay undecided; --force takes the
dump anyway. The summary says what the run cost each instance: its
stop-the-world pauses (go_sched_pauses_total_other_seconds) and the bytes read.

Needs get on /debug/pprof/*, /debug/api_priority_and_fairness/*, /metrics,
/version and list on endpointslices (deploy/rbac.yaml).

` + exitCodesHelp,
		Example: diagnoseExample,
		Args:    cobra.NoArgs,
		RunE:    o.runE,
	}
	o.addFlags(cmd)
	return cmd
}

func (o *DiagnoseOptions) addFlags(cmd *cobra.Command) {
	o.LiveOptions.addFlags(cmd)
	addTraceFlags(cmd, &o.Trace)
	o.Fleet.addFlags(cmd)
	addReportOutputFlag(cmd, &o.Output, &o.NoHeaders)
	addFailOnFlag(cmd, &o.FailOn)
}

func (o *DiagnoseOptions) runE(cmd *cobra.Command, args []string) error {
	warnDeprecated(cmd, o.ErrOut)
	if err := o.Complete(); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run()
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
	return o.Trace.validate()
}

// Run samples the cluster, diagnoses and writes the report.
func (o *DiagnoseOptions) Run() error {
	if o.Fleet.enabled() {
		return o.runFleet()
	}
	var progress io.Writer = o.ErrOut
	if o.printer.Structured() && o.Verbose == 0 {
		progress = nil
	}
	cfg, err := o.config(progress)
	if err != nil {
		return err
	}
	ctx, cancel := signalContext()
	defer cancel()
	target := live.NewCaptures()
	res, err := live.Run(ctx, cfg, target)
	if err != nil {
		return err
	}
	res.Notes = warnNotes(o.ErrOut, append(o.notes, res.Notes...))
	errs := instanceErrors(res, o.ErrOut)
	loaded := target.Loaded(res)
	if len(loaded.Captures) == 0 {
		return fmt.Errorf("%w: %s", errNoInstance, firstOr(errs, "nothing fetched"))
	}
	servers := loaded.Servers()
	for i := range servers {
		for _, ir := range res.Instances {
			// A restarted instance is named "<instance> (process started ...)".
			if servers[i].Name == ir.Instance.Name || strings.HasPrefix(servers[i].Name, ir.Instance.Name+" (") {
				servers[i].Notes = append(servers[i].Notes, ir.Notes...)
				if !ir.Instance.Pinned {
					servers[i].Notes = append(servers[i].Notes, "not pinned: read through the kubeconfig host")
				}
			}
		}
	}
	r := diagnosis.Diagnose(servers, diagnoseOptions(captureSlack))
	applyRecorded(r, res.Manifest(api.Manifest{}).Instances)
	withheld := withheldAdvice(res, o.MaxPause)
	r.Warnings = append(append(append(res.Notes, loaded.Warnings...), withheld...), r.Warnings...)
	r.Errors = errs
	if err := writeReport(o.Out, r, o.printer, o.failOn); err != nil {
		var ie *incompleteError
		if errors.As(err, &ie) && forceAdvised(res) {
			ie.hint = forceHint
		}
		return err
	}
	return errIncomplete(errs)
}

// applyRecorded gives each API server of r what the run recorded of its
// instance: what it cost the server, and the evidence chosen. A restarted
// instance's servers ("<instance> (process started ...)") share it.
func applyRecorded(r *api.Report, insts []api.Instance) {
	for i := range r.APIServers {
		for _, inst := range insts {
			if n := r.APIServers[i].Name; n == inst.Name || strings.HasPrefix(n, inst.Name+" (") {
				r.APIServers[i].Cost, r.APIServers[i].Evidence = inst.Cost, inst.Evidence
			}
		}
	}
}

// captureSlack: live captures are timed by the server's Date header of the
// goroutine dump (1 s resolution), so ages are precise to a few seconds.
const captureSlack = 5 * time.Second

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}
