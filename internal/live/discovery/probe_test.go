package discovery

import (
	"bytes"
	"compress/gzip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
)

// The identity probe reads the start time and the first valid
// apiserver_id_hash of a /metrics text, streamed; a text that has no
// start, or two, tells no process.
func TestScanFingerprint(t *testing.T) {
	t.Parallel()
	hash := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name, text string
		want       model.Fingerprint
		err        string
	}{
		{"help and sample", "# HELP process_start_time_seconds x\nprocess_start_time_seconds 1.76441e+09\n", model.Fingerprint{Start: 1.76441e+09}, ""},
		{"no last newline", "process_start_time_seconds_other 3\nprocess_start_time_seconds 1764410000.25", model.Fingerprint{Start: 1764410000.25}, ""},
		{"empty labels, timestamp", "process_start_time_seconds{} 1764410000 1764410009000\n", model.Fingerprint{Start: 1764410000}, ""},
		{"id hash", `apiserver_authentication_config_controller_last_config_info{apiserver_id_hash="` + hash + "\",hash=\"x\"} 1\nprocess_start_time_seconds 5\n", model.Fingerprint{Start: 5, IDHash: hash}, ""},
		{"a hash not checked is none", "x{apiserver_id_hash=\"sha256:\x1b\u202e\"} 1\nprocess_start_time_seconds 5\n", model.Fingerprint{Start: 5}, ""},
		{"no start", "go_goroutines 12\n", model.Fingerprint{}, "has no process_start_time_seconds"},
		{"NaN", "process_start_time_seconds NaN\n", model.Fingerprint{}, "has no process_start_time_seconds"},
		{"+Inf", "process_start_time_seconds +Inf\n", model.Fingerprint{}, "has no process_start_time_seconds"},
		{"two starts", "process_start_time_seconds 5\nprocess_start_time_seconds 6\n", model.Fingerprint{}, "line 2: a second process_start_time_seconds"},
		{"a line too long", strings.Repeat("x", maxProbeLine+1) + "\nprocess_start_time_seconds 5\n", model.Fingerprint{}, "a line longer than 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := scanFingerprint(strings.NewReader(tc.text), "lb:443")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "lb:443: ") {
					t.Fatalf("error %v, want one naming lb:443 and saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("fingerprint (-want +got):\n%s", diff)
			}
		})
	}
}

// A real /metrics, gzip-compressed without Content-Encoding, says its
// start; one past model.MaxMetricsBytes after decompression is refused.
func TestScanFingerprintGzipAndBound(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile(golden.Fixture("t2", "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(text)
	zw.Close()
	fp, err := scanFingerprint(&z, "lb:443")
	if err != nil || fp.Start <= 0 {
		t.Fatalf("fingerprint %+v, %v; want the capture's start", fp, err)
	}
	big := bytes.Repeat([]byte("go_goroutines 12\n"), model.MaxMetricsBytes/17+1)
	if _, err := scanFingerprint(bytes.NewReader(big), "lb:443"); model.TooLarge(err) == nil {
		t.Errorf("a /metrics past the bound: error %v, want a *TooLargeError", err)
	}
}

// BenchmarkScanFingerprint is one identity probe's work on a real
// /metrics (2.3 MB): what each probe of a sample through the balancer
// adds to the client.
func BenchmarkScanFingerprint(b *testing.B) {
	text, err := os.ReadFile(golden.Fixture("t2", "metrics.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scanFingerprint(bytes.NewReader(text), "lb:443"); err != nil {
			b.Fatal(err)
		}
	}
}
