package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/watch-doctor/watch-doctor/internal/report"
	api "github.com/watch-doctor/watch-doctor/pkg/api/v1alpha1"
)

const failOnNone = "none"

var failOnValues = []string{string(api.SeverityCritical), string(api.SeverityWarning), string(api.SeverityInfo), failOnNone}

// addOutputFlag is -o and, when noHeaders is not nil, --no-headers (every
// command that prints a table has it).
func addOutputFlag(cmd *cobra.Command, p *string, noHeaders *bool) {
	cmd.Flags().StringVarP(p, "output", "o", *p, "output format: one of "+strings.Join(report.FormatNames(), ", "))
	if noHeaders != nil {
		addNoHeadersFlag(cmd, noHeaders)
	}
}

func addFailOnFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "fail-on", *p, "exit 1 when a finding has at least this severity: one of "+strings.Join(failOnValues, ", "))
}

// parseFormat resolves an -o value into a report.Format.
func parseFormat(s string) (report.Format, error) {
	f, err := report.ParseFormat(s)
	var ue *report.UnsupportedFormatError
	if errors.As(err, &ue) {
		return "", fmt.Errorf("unsupported --output %q: use one of %s", ue.Value, strings.Join(report.FormatNames(), ", "))
	}
	return f, err
}

func parseFailOn(s string) (string, error) {
	for _, v := range failOnValues {
		if strings.EqualFold(s, v) {
			return v, nil
		}
	}
	return "", fmt.Errorf("unsupported --fail-on %q: use one of %s", s, strings.Join(failOnValues, ", "))
}
