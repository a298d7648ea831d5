package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/watch-doctor/watch-doctor/internal/fakeapiserver"
	"github.com/watch-doctor/watch-doctor/internal/golden"
	"github.com/watch-doctor/watch-doctor/internal/live/model"
	"github.com/watch-doctor/watch-doctor/pkg/apf"
	"github.com/watch-doctor/watch-doctor/pkg/metrics"
)

// gaugeFrom parses a /metrics text read at at into the content tie's
// gauge, as readMetrics does.
func gaugeFrom(t *testing.T, text string, at time.Time) executingGauge {
	t.Helper()
	s, err := (metrics.Parser{Families: lookFamilies}).Parse(strings.NewReader(text), "test/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return gaugeOf(metrics.Extract(s), at)
}

// The content tie's inequality: in each priority level and flow schema,
// the rows of the APF requests dump executing since more than tieSlack
// before the /metrics read are no more than its gauge. Rows started
// within the slack, and waiting rows, are not counted; a pair the gauge
// lacks counts 0, unless the gauge folds label values ("unexpected");
// without the gauge no check is made, and why is said.
func TestOvercounted(t *testing.T) {
	t.Parallel()
	read := time.Date(2026, 11, 29, 10, 24, 32, 0, time.UTC)
	const head = "# TYPE apiserver_flowcontrol_current_executing_requests gauge\n"
	gauge := func(pl, fs, v string) string {
		return `apiserver_flowcontrol_current_executing_requests{flow_schema="` + fs + `",priority_level="` + pl + `"} ` + v + "\n"
	}
	row := func(pl, fs string, before time.Duration) apf.Request {
		return apf.Request{PriorityLevel: pl, FlowSchema: fs, QueueIndex: 3, IndexInQueue: -1, StartTime: read.Add(-before)}
	}
	two := []apf.Request{row("global-default", "global-default", time.Minute), row("global-default", "global-default", time.Minute)}
	for _, tc := range []struct {
		name    string
		metrics string
		rows    []apf.Request
		want    *overcount
		checked int
		absent  string
	}{
		{"equal", head + gauge("global-default", "global-default", "2"), two, nil, 2, ""},
		{"fewer", head + gauge("global-default", "global-default", "3"), two, nil, 2, ""},
		{"more", head + gauge("global-default", "global-default", "1"), two, &overcount{apfPair{"global-default", "global-default"}, 2, 1}, 2, ""},
		{"rows within the slack", head + gauge("global-default", "global-default", "1"),
			[]apf.Request{row("global-default", "global-default", time.Minute), row("global-default", "global-default", tieSlack-time.Second), row("global-default", "global-default", -time.Second)}, nil, 1, ""},
		{"waiting rows", head + gauge("global-default", "global-default", "0"),
			[]apf.Request{{PriorityLevel: "global-default", FlowSchema: "global-default", QueueIndex: 3, IndexInQueue: 0, ArriveTime: read.Add(-time.Minute)}}, nil, 0, ""},
		{"a pair the gauge lacks", head + gauge("global-default", "global-default", "2"),
			append([]apf.Request{row("workload-low", "service-accounts", time.Minute)}, two...), &overcount{apfPair{"workload-low", "service-accounts"}, 1, 0}, 3, ""},
		{"a pair folded into unexpected", head + gauge("global-default", "global-default", "2") + gauge("workload-low", "unexpected", "1"),
			append([]apf.Request{row("workload-low", "service-accounts", time.Minute)}, two...), nil, 2, ""},
		{"missing gauge", "# TYPE go_goroutines gauge\ngo_goroutines 12\n", two, nil, 0,
			"its /metrics has no apiserver_flowcontrol_current_executing_requests (an older release, the metric disabled or renamed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := gaugeFrom(t, tc.metrics, read)
			if diff := cmp.Diff(tc.absent, g.absent); diff != "" {
				t.Fatalf("why the gauge cannot be used (-want +got):\n%s", diff)
			}
			if g.absent != "" {
				return
			}
			over, checked := overcounted(tc.rows, g)
			if diff := cmp.Diff(tc.want, over, cmp.AllowUnexported(overcount{}, apfPair{})); diff != "" || checked != tc.checked {
				t.Errorf("overcount (-want +got):\n%s\nchecked %d rows, want %d", diff, checked, tc.checked)
			}
		})
	}
	if g := gaugeFrom(t, head+gauge("global-default", "global-default", "2"), time.Time{}); g.absent != "its /metrics carried no Date header to compare the dump's start times with" {
		t.Errorf("without a Date: absent %q", g.absent)
	}
}

// Through the kubeconfig host, a /metrics without the executing-requests
// gauge ties nothing by content: the sample is not mixed for it, and its
// note says the dump could not be checked, and why, never that it was.
func TestContentTieWithoutTheGaugeIsSaid(t *testing.T) {
	t.Parallel()
	lb := fakeapiserver.Start(t, fakeapiserver.EditCapture(t, golden.Fixture("t2"), func(name string, b []byte) []byte {
		if name != "metrics.txt" {
			return b
		}
		var kept []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, executingGaugeFamily) {
				kept = append(kept, l)
			}
		}
		return []byte(strings.Join(kept, "\n"))
	}))
	lb.Endpoints = []string{"127.0.0.1:1"} // nothing listens there: read through the host
	lb.NoProfiling = true
	cfg := model.Config{REST: fakeapiserver.RESTConfig(t, lb, fakeapiserver.TokenAdmin), Samples: 1, RequestTimeout: 10 * time.Second, Clock: testingclock.NewFakeClock(time.Now())}
	res, err := Run(context.Background(), cfg, NewCaptures())
	if err != nil {
		t.Fatal(err)
	}
	ir := res.Instances[0]
	if ir.Samples[0].Mixed != "" {
		t.Errorf("mixed %q, want the sample tied by its probes", ir.Samples[0].Mixed)
	}
	const want = "; its APF requests dump could not be checked against /metrics: its /metrics has no apiserver_flowcontrol_current_executing_requests (an older release, the metric disabled or renamed)"
	notes := strings.Join(ir.Notes, "\n")
	if !strings.Contains(notes, want) || strings.Contains(notes, "lists no more requests executing") {
		t.Errorf("notes %q\nlack %q, or say the dump was checked", ir.Notes, want)
	}
}
