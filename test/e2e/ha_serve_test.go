package e2e

// kubectl watch-doctor serve against the HA control plane (sharedHA: three
// real kube-apiservers behind a TCP balancer), run from the client network
// that reaches only the balancer, as from outside a managed cluster.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

// scrapeSeries is one series of a scrape: its labels and value.
type scrapeSeries struct {
	labels map[string]string
	value  float64
}

// parseScrape reads the watchdoctor_ series of a text exposition, by
// name, with the Prometheus text parser.
func parseScrape(t *testing.T, text string) map[string][]scrapeSeries {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("serve's /metrics: %v", err)
	}
	out := map[string][]scrapeSeries{}
	for name, fam := range fams {
		if !strings.HasPrefix(name, "watchdoctor_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			s := scrapeSeries{labels: map[string]string{}}
			for _, p := range m.GetLabel() {
				s.labels[p.GetName()] = p.GetValue()
			}
			switch {
			case m.Gauge != nil:
				s.value = m.GetGauge().GetValue()
			case m.Counter != nil:
				s.value = m.GetCounter().GetValue()
			case m.Untyped != nil:
				s.value = m.GetUntyped().GetValue()
			default:
				continue // histograms and summaries: not read here
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// apiserversOf are the apiserver labels of the series of name, sorted.
func apiserversOf(series map[string][]scrapeSeries, name string, match func(map[string]string) bool) []string {
	var out []string
	for _, s := range series[name] {
		if (match == nil || match(s.labels)) && !slices.Contains(out, s.labels["apiserver"]) {
			out = append(out, s.labels["apiserver"])
		}
	}
	slices.Sort(out)
	return out
}

// oneValue is the value of the one series of name, or false.
func oneValue(series map[string][]scrapeSeries, name string) (scrapeSeries, bool) {
	if len(series[name]) != 1 {
		return scrapeSeries{}, false
	}
	return series[name][0], true
}

// scrapeIn reads serve's /metrics from inside the client network (its
// loopback is that namespace's own).
func scrapeIn(ctx context.Context, cn *cluster.ClientNetwork, addr string) (string, error) {
	cmd := cn.Command("curl", "-sS", "--fail", "--max-time", "10", "http://"+addr+"/metrics")
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return string(out), err
}

// TestHAServeThroughTheLoadBalancer: serve, from the client network that
// reaches only the load balancer, reads the three instances through it at
// every look, each over a connection of its own. Scraped at two looks (the
// round robin has turned between them, so the connections reach the
// instances in another order), it exports series for every instance under
// the same apiserver labels, each starting with the balancer's address;
// the watch stuck on apiserver-2 is on one and the same label at both;
// and the coverage gauges say 3 of 3, through the load balancer.
func TestHAServeThroughTheLoadBalancer(t *testing.T) {
	h := sharedHA(t)
	h.waitStuck(t)
	cn, err := cluster.StartClientNetwork(cluster.LBAddress)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cn.Close(); err != nil {
			t.Error(err)
		}
	})
	lb := h.cluster.LoadBalancer().Address()
	// nsenter execs serve in the namespace: the signal reaches serve.
	addr := runServe(t, cn.Command, h.cluster.Kubeconfig(cluster.UserWatchDoctor))

	// scrape waits for a look after the one numbered after (ok looks),
	// that read all three instances, and returns its series and number.
	scrape := func(after float64) (map[string][]scrapeSeries, float64) {
		t.Helper()
		var last string
		var got map[string][]scrapeSeries
		var n float64
		err := wait.PollUntilContextTimeout(context.Background(), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			text, err := scrapeIn(ctx, cn, addr)
			if err != nil {
				last = err.Error()
				return false, nil
			}
			last = text
			got = parseScrape(t, text)
			n = -1
			for _, s := range got["watchdoctor_looks_total"] {
				if s.labels["result"] == "ok" {
					n = s.value
				}
			}
			read, ok := oneValue(got, "watchdoctor_read_instances")
			return n > after && ok && read.value == 3 && len(apiserversOf(got, "watchdoctor_last_look_success", nil)) == 3, nil
		})
		if err != nil {
			t.Fatalf("no look after look %v read the three instances through %s: %v; the last scrape:\n%s", after, lb, err, tail(last, 6000))
		}
		return got, n
	}
	first, n := scrape(0)
	second, m := scrape(n)
	t.Logf("scraped after ok looks %v and %v", n, m)

	stuckSeries := func(l map[string]string) bool { return l["user"] == cluster.UserSlowInformer }
	var labels [][]string
	for i, s := range []map[string][]scrapeSeries{first, second} {
		names := apiserversOf(s, "watchdoctor_last_look_success", nil)
		labels = append(labels, names)
		for _, name := range names {
			if !strings.HasPrefix(name, lb) {
				t.Errorf("scrape %d: apiserver %q does not start with the load balancer's address %s", i+1, name, lb)
			}
		}
		for _, metric := range []string{"watchdoctor_last_look_timestamp_seconds", "watchdoctor_initializing_watch_seats", "watchdoctor_watches_by_state"} {
			if got := apiserversOf(s, metric, nil); !slices.Equal(got, names) {
				t.Errorf("scrape %d: %s has series for %q, want every instance %q", i+1, metric, got, names)
			}
		}
		if live, ok := oneValue(s, "watchdoctor_live_instances"); !ok || live.value != 3 || live.labels["apiserver"] != lb {
			t.Errorf("scrape %d: watchdoctor_live_instances %+v, want 3 for %s", i+1, s["watchdoctor_live_instances"], lb)
		}
		if read, ok := oneValue(s, "watchdoctor_read_instances"); !ok || read.value != 3 || read.labels["route"] != "load_balancer" || read.labels["apiserver"] != lb {
			t.Errorf("scrape %d: watchdoctor_read_instances %+v, want 3 by route load_balancer for %s", i+1, s["watchdoctor_read_instances"], lb)
		}
		t.Logf("scrape %d: series for %q; slow-informer's stuck watch on %q", i+1, names, apiserversOf(s, "watchdoctor_user_oldest_initializing_age_seconds", stuckSeries))
	}
	if diff := cmp.Diff(labels[0], labels[1]); diff != "" {
		t.Errorf("the instances' labels changed between the looks (-first +second):\n%s", diff)
	}
	stuckFirst := apiserversOf(first, "watchdoctor_user_oldest_initializing_age_seconds", stuckSeries)
	stuckSecond := apiserversOf(second, "watchdoctor_user_oldest_initializing_age_seconds", stuckSeries)
	if len(stuckFirst) != 1 || !slices.Equal(stuckFirst, stuckSecond) {
		t.Errorf("slow-informer's stuck watch (on one instance alone) exported on %q, then on %q: want one instance, the same at both looks", stuckFirst, stuckSecond)
	}
	if len(h.cluster.Instances()) != len(labels[0]) {
		t.Errorf("%d instances exported, the cluster runs %d", len(labels[0]), len(h.cluster.Instances()))
	}
}
