package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pausesText(count int, sum float64, buckets ...int) string {
	bounds := []string{"8.191999999999999e-05", "0.0009175039999999999", "0.11744051199999998", "+Inf"}
	var b strings.Builder
	b.WriteString("# TYPE go_sched_pauses_total_other_seconds histogram\n")
	for i, c := range buckets {
		b.WriteString("go_sched_pauses_total_other_seconds_bucket{le=\"" + bounds[i] + "\"} " + strconv.Itoa(c) + "\n")
	}
	b.WriteString("go_sched_pauses_total_other_seconds_sum " + strconv.FormatFloat(sum, 'g', -1, 64) + "\n")
	b.WriteString("go_sched_pauses_total_other_seconds_count " + strconv.Itoa(count) + "\n")
	return b.String()
}

func TestSchedPausesSince(t *testing.T) {
	read := func(text string) Pauses {
		t.Helper()
		s, err := Parse(strings.NewReader(text), "metrics.txt")
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := SchedPauses(s)
		if err != nil || !ok {
			t.Fatalf("SchedPauses: ok %v, err %v", ok, err)
		}
		return p
	}
	before := read(pausesText(7, 0.0315, 4, 4, 7, 7))
	tests := []struct {
		name  string
		after string
		want  PauseDelta
	}{
		{"none", pausesText(7, 0.0315, 4, 4, 7, 7), PauseDelta{}},
		{"one trace start", pausesText(8, 0.0316, 5, 5, 8, 8), PauseDelta{Count: 1, Sum: 0.0001, LargestAtMost: 8.191999999999999e-05}},
		{"a dump among small ones", pausesText(10, 0.2, 6, 6, 9, 10), PauseDelta{Count: 3, Sum: 0.1685, LargestAtMost: math.Inf(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := read(tt.after).Since(before)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 || a == b })); diff != "" {
				t.Errorf("Since (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := before.Since(read(pausesText(8, 0.0316, 5, 5, 8, 8))); err == nil || !strings.Contains(err.Error(), "not of one process") {
		t.Errorf("a count that went down: err %v, want one saying the readings are not of one process", err)
	}
}

func TestSchedPausesAbsentOrMalformed(t *testing.T) {
	s, err := Parse(strings.NewReader("# TYPE go_goroutines gauge\ngo_goroutines 5\n"), "old.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := SchedPauses(s); ok || err != nil {
		t.Errorf("no histogram: ok %v err %v, want false, nil", ok, err)
	}
	s, err = Parse(strings.NewReader("# TYPE go_sched_pauses_total_other_seconds gauge\ngo_sched_pauses_total_other_seconds 5\n"), "odd.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := SchedPauses(s); err == nil || !strings.Contains(err.Error(), "odd.txt") {
		t.Errorf("a gauge: err %v, want one naming odd.txt", err)
	}
}

func TestSchedPausesOfTheShippedCaptures(t *testing.T) {
	read := func(sample string) Pauses {
		t.Helper()
		f, err := os.Open(filepath.Join("..", "..", "testdata", "kube-apiserver-v1.37.2", "seed-repro", sample, "metrics.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := Parse(f, sample)
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := SchedPauses(s)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, err %v", sample, ok, err)
		}
		return p
	}
	t1, t2 := read("t1"), read("t2")
	if t1.Count != 7 || len(t1.Buckets) != 8 {
		t.Errorf("t1: count %d, %d buckets; the capture has 7 pauses in 8 buckets", t1.Count, len(t1.Buckets))
	}
	d, err := t2.Since(t1)
	if err != nil {
		t.Fatal(err)
	}
	// Between t1 and t2 the capture script took a debug=2 dump of t1:
	// at least one pause.
	if d.Count == 0 || d.LargestAtMost == 0 {
		t.Errorf("t2 since t1: %+v, want the pause(s) of t1's fetches", d)
	}
}

// The stopping part of the pauses is their growth too, when both readings
// carry it, it did not go down and it is no more than the pauses' total;
// otherwise it is not known, and the total stands alone.
func TestSchedPausesStopping(t *testing.T) {
	read := func(count int, sum float64, stopping string) Pauses {
		t.Helper()
		text := pausesText(count, sum, count, count, count, count)
		if stopping != "" {
			text += "# TYPE go_sched_pauses_stopping_other_seconds histogram\n" +
				"go_sched_pauses_stopping_other_seconds_bucket{le=\"+Inf\"} " + strconv.Itoa(count) + "\n" +
				"go_sched_pauses_stopping_other_seconds_sum " + stopping + "\n" +
				"go_sched_pauses_stopping_other_seconds_count " + strconv.Itoa(count) + "\n"
		}
		s, err := Parse(strings.NewReader(text), "metrics.txt")
		if err != nil {
			t.Fatal(err)
		}
		p, ok, err := SchedPauses(s)
		if err != nil || !ok {
			t.Fatalf("SchedPauses: ok %v, err %v", ok, err)
		}
		return p
	}
	for _, tc := range []struct {
		name          string
		before, after Pauses
		known         bool
		stopping      float64
	}{
		{"both", read(4, 0.002, "0.001"), read(6, 0.066, "0.064"), true, 0.063},
		{"absent before", read(4, 0.002, ""), read(6, 0.066, "0.064"), false, 0},
		{"NaN", read(4, 0.002, "0.001"), read(6, 0.066, "NaN"), false, 0},
		{"went down", read(4, 0.002, "0.001"), read(6, 0.066, "0.0005"), false, 0},
		{"more than the total", read(4, 0.002, "0.001"), read(6, 0.066, "0.5"), false, 0},
	} {
		d, err := tc.after.Since(tc.before)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d.StoppingKnown != tc.known || math.Abs(d.Stopping-tc.stopping) > 1e-9 {
			t.Errorf("%s: stopping %g (known %v), want %g (known %v)", tc.name, d.Stopping, d.StoppingKnown, tc.stopping, tc.known)
		}
	}
}
