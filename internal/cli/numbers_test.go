package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
)

// hostileForms are every output form of a diagnosis.
var hostileForms = []string{"table", "wide", "json", "yaml", "name", "jsonpath={.summary}", "go-template={{.kind}}"}

// setMetric sets the value of every series of name (labelled or not) in
// a /metrics text.
func setMetric(text, name string, v float64) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			if j := strings.LastIndexByte(l, ' '); j > 0 {
				lines[i] = l[:j+1] + strconv.FormatFloat(v, 'g', -1, 64)
			}
		}
	}
	return strings.Join(lines, "\n")
}

// hostileNumbers is a capture of fixture with hostile values set.
func hostileNumbers(t testing.TB, fixture string, values map[string]float64) string {
	t.Helper()
	src := golden.Fixture(fixture)
	at, err := os.ReadFile(filepath.Join(src, "captured-at.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := fakeapiserver.CopyCapture(t, src, strings.TrimSpace(string(at)))
	b, err := os.ReadFile(filepath.Join(dir, "metrics.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for name, v := range values {
		text = setMetric(text, name, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FuzzEveryNumberFromOutsideIsChecked feeds hostile numbers (NaN, ±Inf,
// negative, huge, and counters going down between the samples) through
// /metrics into every output form of diagnose, and into collect: a
// report (a manifest) is always written, never with "NaN" in text, and
// JSON always parses. Each input runs a command against a loopback server
// of its own (about a second), hence its own count in make fuzz; the seeds
// run in parallel under go test (T.Parallel has no effect while fuzzing):
// fuzztime: 50x
func FuzzEveryNumberFromOutsideIsChecked(f *testing.F) {
	nan, inf := math.NaN(), math.Inf(1)
	for i := range hostileForms {
		f.Add(uint8(i), nan, nan, nan, 1.0, 2.0)
	}
	f.Add(uint8(0), inf, -inf, inf, 5.0, -inf)
	f.Add(uint8(2), -1.0, -5.0, -2.0, 3.0, 1.0)      // negatives; the sum goes down
	f.Add(uint8(3), 1e308, 1e308, 1e300, 9e307, 1e1) // huge; the sum goes down
	f.Add(uint8(6), 2231.0, nan, 0.5, inf, nan)
	f.Add(uint8(len(hostileForms)), nan, inf, nan, nan, nan) // collect
	f.Fuzz(func(t *testing.T, form uint8, goroutines, start, watchers, sum1, sum2 float64) {
		t.Parallel()
		a := hostileNumbers(t, "t1", map[string]float64{"go_goroutines": goroutines, "process_start_time_seconds": start, "apiserver_watch_cache_events_dispatched_total": watchers, "go_sched_pauses_total_other_seconds_sum": sum1})
		b := hostileNumbers(t, "t2", map[string]float64{"go_goroutines": goroutines, "process_start_time_seconds": start, "apiserver_watch_cache_events_dispatched_total": watchers / 2, "go_sched_pauses_total_other_seconds_sum": sum2})
		s := fakeapiserver.Start(t, a, b)
		kc := fakeapiserver.Kubeconfig(t, s, fakeapiserver.TokenAdmin)
		args := []string{"--kubeconfig", kc, "--apiserver", s.Address(), "--request-timeout", "10s"}
		if int(form)%(len(hostileForms)+1) == len(hostileForms) {
			dir := filepath.Join(t.TempDir(), "bundle")
			code, _, errOut := runLive(t, append([]string{"collect", "-d", dir}, args...)...)
			if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
				t.Fatalf("exit %d, no manifest: %v\n%s", code, err, errOut)
			}
			if strings.Contains(measured(errOut), "NaN") {
				t.Errorf("NaN on stderr:\n%s", errOut)
			}
			return
		}
		o := hostileForms[int(form)%(len(hostileForms)+1)]
		code, out, errOut := runLive(t, append([]string{"diagnose", "-o", o}, args...)...)
		if out == "" {
			t.Fatalf("-o %s: exit %d, no report\n%s", o, code, errOut)
		}
		if strings.Contains(measured(out+errOut), "NaN") {
			t.Errorf("-o %s: NaN in the output:\n%s\n%s", o, out, errOut)
		}
		if o == "json" && !json.Valid([]byte(out)) {
			t.Errorf("-o json: not JSON:\n%s", out)
		}
	})
}

// measured is s without the notes saying a value is not measured, which
// name the value read ("value NaN: not measured").
func measured(s string) string { return strings.ReplaceAll(s, "NaN: not measured", "") }
