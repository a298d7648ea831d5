package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/watch-doctor/watch-doctor/internal/report"
)

// version and commit are set at link time by `make build`/`make dist`
// (-ldflags "-X github.com/watch-doctor/watch-doctor/internal/cli.version=v0.1.0
// -X github.com/watch-doctor/watch-doctor/internal/cli.commit=<sha>").
var (
	version = ""
	commit  = ""
)

const versionExample = `  # The plugin's version, commit and Go toolchain
  kubectl watch-doctor version

  # The same, for a script
  kubectl watch-doctor version -o json`

// VersionInfo is what `version -o json|yaml` prints.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// VersionOptions holds what `version` needs.
type VersionOptions struct {
	genericiooptions.IOStreams
	Output string
}

// NewVersionOptions returns options writing to streams.
func NewVersionOptions(streams genericiooptions.IOStreams) *VersionOptions {
	return &VersionOptions{IOStreams: streams}
}

// NewCmdVersion builds `kubectl watch-doctor version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewVersionOptions(streams)
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the plugin version, commit and Go version",
		Example: versionExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: one of json, yaml (default: one line)")
	registerValues(cmd, "output", "json", "yaml")
	return cmd
}

// currentVersion reads the stamped values, falling back on the build info.
func currentVersion() VersionInfo {
	v := VersionInfo{Version: versionString(), Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.GoVersion = bi.GoVersion
		if v.Commit == "" {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					v.Commit = s.Value
				}
			}
		}
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	v := currentVersion()
	switch o.Output {
	case "":
		_, err := fmt.Fprintln(o.Out, versionLine(v))
		return err
	case "json", "yaml":
		return report.Print(o.Out, v, report.Options{Format: report.Format(o.Output)})
	}
	return fmt.Errorf("unsupported --output %q: use one of json, yaml, or none for one line", o.Output)
}

func versionLine(v VersionInfo) string {
	return fmt.Sprintf("kubectl-watch_doctor %s (commit %s, %s, %s)", v.Version, v.Commit, v.GoVersion, v.Platform)
}

// versionString is the plugin version: set at link time, else the module
// version, else "dev".
func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
