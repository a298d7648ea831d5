package engine

import (
	"context"
	"regexp"

	"github.com/watch-doctor/watch-doctor/internal/diagnosis"
	"github.com/watch-doctor/watch-doctor/internal/english"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/internal/watches"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

// notPinnedNote is the note of a server read through the kubeconfig host:
// what ties its evidence to it, and what cannot be excluded
// (live/pin.go, docs/diagnose.md).
const notPinnedNote = "not pinned: read through the kubeconfig host; its APF dumps and goroutine profiles carry no process identity and are tied to this process only by identity probes of /metrics over the same connection and, for the APF requests dump, by its executing requests agreeing with that /metrics' apiserver_flowcontrol_current_executing_requests (each sample's note says whether that check was made), which a load balancer routing /debug paths to another process than /metrics would pass whenever the two processes' executing APF requests agree"

// leaseNote opens the note naming the identity lease of a server reached
// through the kubeconfig host, when its /metrics said which.
const leaseNote = "holds the identity lease (apiserver_id_hash) of "

// diagnose groups r.Loaded per API server process, gives each the notes
// of its instance's run (runs; none for loaded files), diagnoses them and
// gives each of the report's servers what was recorded of its instance
// (recorded: its cost and evidence), matched by the instance's name as a
// field, never by the display name.
//
// It stops once ctx is done (diagnosis.DiagnoseContext), returning its
// error and leaving r.Report nil.
func (r *Result) diagnose(ctx context.Context, cfg Config, recorded []api.Instance, runs []model.InstanceResult) error {
	procs := r.Loaded.Processes()
	inputs := make([]watches.Server, len(procs))
	r.Processes = make([]Process, len(procs))
	for i, g := range procs {
		s := g.Server()
		p := Process{Instance: model.Instance{Name: g.Instance}, ProcessStart: g.ProcessStart, Restarted: g.Restarted, Name: g.Name}
		for _, ir := range runs {
			if g.Instance == "" || g.Instance != ir.Instance.Name {
				continue
			}
			p.Instance = ir.Instance
			s.Notes = append(s.Notes, ir.Notes...)
			if !ir.Instance.Pinned {
				s.Notes = append(s.Notes, notPinnedNote)
			}
			if ir.Instance.Lease != "" {
				s.Notes = append(s.Notes, leaseNote+ir.Instance.Lease)
			}
		}
		if runs == nil {
			if inst := find(recorded, g.Instance); inst != nil {
				p.Instance.Address, p.Instance.Pinned = inst.Address, inst.Pinned
			}
		}
		p.Input = s
		inputs[i] = s
		r.Processes[i] = p
	}
	rep, err := diagnosis.DiagnoseContext(ctx, inputs, cfg.Diagnosis)
	if err != nil {
		return err
	}
	// Diagnose appends one APIServer per input, in order.
	for i := range rep.APIServers {
		if i < len(procs) {
			if inst := find(recorded, procs[i].Instance); inst != nil {
				rep.APIServers[i].Cost, rep.APIServers[i].Evidence = inst.Cost, inst.Evidence
			}
		}
	}
	warnings := append(append([]string(nil), r.Notes...), r.Loaded.Warnings...)
	for _, w := range r.Withheld {
		if cfg.Phrasing.Withheld != nil {
			warnings = append(warnings, cfg.Phrasing.Withheld(w))
		} else {
			warnings = append(warnings, w.Error())
		}
	}
	rep.Warnings = append(warnings, rep.Warnings...)
	if len(rep.Warnings) == 0 {
		rep.Warnings = nil
	}
	rep.Errors = r.Errors
	r.Report = rep
	return nil
}

// find is the last of insts named name (a later bundle's record of an
// instance wins, as bundles are read in order); nil for "" or none.
func find(insts []api.Instance, name string) *api.Instance {
	var out *api.Instance
	for i := range insts {
		if name != "" && insts[i].Name == name {
			out = &insts[i]
		}
	}
	return out
}

// numbers are what lines of one kind differ in: addresses, ports, counts.
var numbers = regexp.MustCompile(`[0-9]+`)

// Summarize keeps the first english.PerKind lines of each kind, in order,
// and after the last one kept says how many more of that kind there were:
// 500 refused instances are three lines and "and 497 more like it".
// Lines of a kind differ only in their numbers.
func Summarize(lines []string) []string {
	return english.Summarize(lines, func(l string) string { return numbers.ReplaceAllString(l, "#") })
}
