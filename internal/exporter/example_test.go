package exporter_test

import (
	"fmt"

	"github.com/watch-doctor/watch-doctor/internal/exporter"
)

// Label values come from servers we do not control: control characters
// are escaped and the length is bounded.
func ExampleLabel() {
	fmt.Println(exporter.Label("system:serviceaccount:ci:runner\x1b[2J"))
	// Output: system:serviceaccount:ci:runner\u001b[2J
}
