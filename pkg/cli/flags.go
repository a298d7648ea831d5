package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
	"github.com/watch-doctor/watch-doctor/pkg/report"
)

const failOnNone = "none"

var failOnValues = []string{string(api.SeverityCritical), string(api.SeverityWarning), string(api.SeverityInfo), failOnNone}

func addOutputFlag(cmd *cobra.Command, p *string) {
	names := make([]string, len(report.Formats))
	for i, f := range report.Formats {
		names[i] = string(f)
	}
	cmd.Flags().StringVarP(p, "output", "o", *p, "output format: one of "+strings.Join(names, ", "))
}

func addFailOnFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "fail-on", *p, "exit 1 when a finding has at least this severity: one of "+strings.Join(failOnValues, ", "))
}

func parseFailOn(s string) (string, error) {
	for _, v := range failOnValues {
		if strings.EqualFold(s, v) {
			return v, nil
		}
	}
	return "", fmt.Errorf("unsupported --fail-on %q: use one of %s", s, strings.Join(failOnValues, ", "))
}
