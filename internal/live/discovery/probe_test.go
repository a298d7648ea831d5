package discovery

import (
	"bytes"
	"compress/gzip"
	"math"
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

// The probe's memory does not grow with the body: a /metrics padded to
// eight times the real capture's lines allocates as the capture does (the
// scanner's buffer is bounded by the longest line, nothing is kept).
func TestScanFingerprintMemoryDoesNotGrow(t *testing.T) {
	text, err := os.ReadFile(golden.Fixture("t2", "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pad := bytes.Repeat([]byte("go_goroutines 12\n"), 7*len(text)/17)
	big := append(append([]byte{}, pad...), text...)
	allocs := func(body []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := scanFingerprint(bytes.NewReader(body), "lb:443"); err != nil {
				t.Fatal(err)
			}
		})
	}
	if one, eight := allocs(text), allocs(big); eight > one+2 {
		t.Errorf("allocations: %v for the capture, %v for eight times its size: the probe keeps what it reads", one, eight)
	}
}

// FuzzScanFingerprint: any body (a gzip stream too) gives a fingerprint
// with a finite positive start, or an error naming the instance; never a
// panic, and never a start the body does not hold.
func FuzzScanFingerprint(f *testing.F) {
	f.Add([]byte("process_start_time_seconds 1.76441e+09\n"))
	f.Add([]byte("process_start_time_seconds{} 1764410000.25 1700000000000\napiserver_storage_size_bytes{apiserver_id_hash=\"sha256:00\"} 1\n"))
	f.Add([]byte("process_start_time_seconds NaN\n"))
	f.Add([]byte("process_start_time_seconds 1\nprocess_start_time_seconds 2\n"))
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, body []byte) {
		fp, err := scanFingerprint(bytes.NewReader(body), "lb:443")
		if err != nil {
			if !strings.Contains(err.Error(), "lb:443") {
				t.Fatalf("error %q does not name the instance", err)
			}
			return
		}
		if !(fp.Start > 0) || math.IsInf(fp.Start, 0) {
			t.Fatalf("start %v, want finite and positive", fp.Start)
		}
		if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
			return
		}
		if !bytes.Contains(body, startName) {
			t.Fatalf("a start %v from a body without %s", fp.Start, startName)
		}
	})
}
