package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// version is set at link time by `make build`/`make dist`
// (-ldflags "-X github.com/watch-doctor/watch-doctor/pkg/cli.version=v0.1.0").
var version = ""

// VersionOptions holds what `version` needs.
type VersionOptions struct {
	genericiooptions.IOStreams
}

// NewVersionOptions returns options writing to streams.
func NewVersionOptions(streams genericiooptions.IOStreams) *VersionOptions {
	return &VersionOptions{IOStreams: streams}
}

// NewCmdVersion builds `kubectl watch-doctor version`.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := NewVersionOptions(streams)
	return &cobra.Command{
		Use:   "version",
		Short: "Print the plugin version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run()
		},
	}
}

// Run prints the version and the Go toolchain that built the binary.
func (o *VersionOptions) Run() error {
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	_, err := fmt.Fprintf(o.Out, "kubectl-watch_doctor %s (%s)\n", versionString(), goVersion)
	return err
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
