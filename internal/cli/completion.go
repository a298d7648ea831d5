package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/watch-doctor/watch-doctor/internal/replay"
	"github.com/watch-doctor/watch-doctor/internal/report"
)

// registerValues completes flag name of cmd with a fixed list of values.
func registerValues(cmd *cobra.Command, name string, values ...string) {
	if cmd.Flags().Lookup(name) == nil {
		return
	}
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// finishCompletion registers what cobra's __complete offers (kubectl runs
// the kubectl_complete-watch_doctor script, which calls it): values of -o,
// --fail-on, --columns, the kubeconfig's contexts and clusters, and the
// built-in replay scenarios.
func finishCompletion(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if _, done := c.GetFlagCompletionFunc("output"); !done {
			registerValues(c, "output", report.FormatNames()...)
		}
		if c.Name() == "replay" {
			registerValues(c, "fail-on", replayFailOnValues...)
			_ = c.RegisterFlagCompletionFunc("columns", completeList(replayColumns))
			registerValues(c, "transport", transportProfiles()...)
			c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				if len(args) > 0 {
					return nil, cobra.ShellCompDirectiveNoFileComp
				}
				// Built-in names, and files for a scenario of one's own.
				return replay.BuiltinNames(), cobra.ShellCompDirectiveDefault
			}
		} else {
			registerValues(c, "fail-on", failOnValues...)
		}
		if c.Flags().Lookup("context") != nil {
			_ = c.RegisterFlagCompletionFunc("context", kubeconfigNames(false))
		}
		if c.Flags().Lookup("contexts") != nil {
			_ = c.RegisterFlagCompletionFunc("contexts", kubeconfigNames(false))
		}
		if c.Flags().Lookup("cluster") != nil {
			_ = c.RegisterFlagCompletionFunc("cluster", kubeconfigNames(true))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeList completes a comma-separated list from values, offering the
// values not yet in it.
func completeList(values []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		prefix, used := "", map[string]bool{}
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			prefix = toComplete[:i+1]
			for _, v := range strings.Split(toComplete[:i], ",") {
				used[v] = true
			}
		}
		var out []string
		for _, v := range values {
			if !used[v] {
				out = append(out, prefix+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// kubeconfigNames completes the contexts (or clusters) of the kubeconfig
// the command line names (--kubeconfig, else KUBECONFIG and
// ~/.kube/config).
func kubeconfigNames(clusters bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		cf := genericclioptions.NewConfigFlags(false)
		if f := cmd.Flags().Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
			kc := f.Value.String()
			cf.KubeConfig = &kc
		}
		raw, err := cf.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		if clusters {
			for n := range raw.Clusters {
				names = append(names, n)
			}
		} else {
			for n := range raw.Contexts {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		if cmd.Flags().Lookup("contexts") != nil && strings.Contains(toComplete, ",") && !clusters {
			return completeList(names)(cmd, args, toComplete)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// transportProfiles are the values of replay --transport.
func transportProfiles() []string {
	var out []string
	for _, p := range replay.Profiles() {
		out = append(out, string(p))
	}
	return out
}
