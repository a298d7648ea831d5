package cli

import (
	"bytes"
	"flag"
	"testing"

	"k8s.io/klog/v2"
)

// TestSilenceKlog: once silenced, a klog error line (client-go's
// "Unexpected error when reading response body") reaches no output of ours.
func TestSilenceKlog(t *testing.T) {
	var buf bytes.Buffer
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if err := fs.Set("logtostderr", "false"); err != nil {
		t.Fatal(err)
	}
	klog.SetOutput(&buf)
	silenceKlog()
	klog.Errorf("Unexpected error when reading response body: %v", "boom")
	klog.Flush()
	if buf.Len() != 0 {
		t.Errorf("klog wrote %q after silenceKlog, want nothing", buf.String())
	}
}
