package exporter

import (
	"github.com/prometheus/client_golang/prometheus"
)

// The metrics, by name. docs/serve.md documents each, with its labels and
// bound; TestDocsNameEveryMetric checks that it does.
var (
	descInitializing = prometheus.NewDesc("watchdoctor_initializing_watches",
		"Watch requests executing in APF (still sending their initial events), per resource and priority level.",
		[]string{"apiserver", "resource", "priority_level"}, nil)
	descOldest = prometheus.NewDesc("watchdoctor_initializing_watch_oldest_age_seconds",
		"Age of the oldest watch request still initializing, per resource and priority level.",
		[]string{"apiserver", "resource", "priority_level"}, nil)
	descSeats = prometheus.NewDesc("watchdoctor_initializing_watch_seats",
		"APF seats held by initializing watch requests, per priority level.",
		[]string{"apiserver", "priority_level"}, nil)
	descLimit = prometheus.NewDesc("watchdoctor_priority_level_seat_limit",
		"The priority level's seat limit (apiserver_flowcontrol_nominal_limit_seats).",
		[]string{"apiserver", "priority_level"}, nil)
	descStates = prometheus.NewDesc("watchdoctor_watches_by_state",
		"Initializing watches by what the look decided: stuck, progressing, undecided (stuck only when nothing is undecided).",
		[]string{"apiserver", "state"}, nil)
	descUserWatches = prometheus.NewDesc("watchdoctor_user_initializing_watches",
		"Initializing watch requests of the top users by seats held, per resource; the rest in user=\"other\".",
		[]string{"apiserver", "user", "resource"}, nil)
	descUserSeats = prometheus.NewDesc("watchdoctor_user_initializing_seats",
		"APF seats held by the initializing watches of the top users, per resource; the rest in user=\"other\".",
		[]string{"apiserver", "user", "resource"}, nil)
	descUserOldest = prometheus.NewDesc("watchdoctor_user_oldest_initializing_age_seconds",
		"Age of the oldest initializing watch of the top users, per resource; the rest in user=\"other\".",
		[]string{"apiserver", "user", "resource"}, nil)
	descLookErrors = prometheus.NewDesc("watchdoctor_look_errors_total",
		"Errors of the looks, by kind.",
		[]string{"apiserver", "kind"}, nil)
	descLastLook = prometheus.NewDesc("watchdoctor_last_look_timestamp_seconds",
		"When the last look of the instance ended, as a Unix time.",
		[]string{"apiserver"}, nil)
	descLastDuration = prometheus.NewDesc("watchdoctor_last_look_duration_seconds",
		"How long the last look of the instance took.",
		[]string{"apiserver"}, nil)
	descLastSuccess = prometheus.NewDesc("watchdoctor_last_look_success",
		"1 when every fetch of the last look of the instance answered, else 0.",
		[]string{"apiserver"}, nil)
	descLastPause = prometheus.NewDesc("watchdoctor_last_look_server_pause_seconds",
		"Non-GC stop-the-world time of the API server during the last look (go_sched_pauses_total_other_seconds before and after it): what the look cost, at most.",
		[]string{"apiserver"}, nil)
	descLastPauseMax = prometheus.NewDesc("watchdoctor_last_look_server_pause_max_seconds",
		"Upper bound of the longest non-GC stop-the-world pause of the API server during the last look (a histogram bucket bound).",
		[]string{"apiserver"}, nil)
	descPauseTotal = prometheus.NewDesc("watchdoctor_look_server_pause_seconds_total",
		"Non-GC stop-the-world time of the API server during the looks, summed.",
		[]string{"apiserver"}, nil)
	descLooks = prometheus.NewDesc("watchdoctor_looks_total",
		"Looks of every instance, by result: ok when at least one instance was read.",
		[]string{"result"}, nil)
	descLastComplete = prometheus.NewDesc("watchdoctor_last_complete_look_timestamp_seconds",
		"When the last look that read at least one instance ended, as a Unix time; 0 before the first.",
		nil, nil)
	descTraceWindow = prometheus.NewDesc("watchdoctor_trace_window_seconds",
		"The span the last execution trace of the instance proved; 0 when it proved nothing.",
		[]string{"apiserver"}, nil)
	descTraceBytes = prometheus.NewDesc("watchdoctor_trace_bytes_total",
		"Bytes of the execution traces read from the instance (rate probes included), summed.",
		[]string{"apiserver"}, nil)
	descTracePause = prometheus.NewDesc("watchdoctor_last_trace_server_pause_seconds",
		"Non-GC stop-the-world time of the API server during the last traced look, its two samples and the trace: what it cost, at most.",
		[]string{"apiserver"}, nil)
	descLiveInstances = prometheus.NewDesc("watchdoctor_live_instances",
		"API server instances the cluster runs (its live identity leases, or the ready endpoints of default/kubernetes when more), at the last look; absent when unknown.",
		[]string{"apiserver"}, nil)
	descReadInstances = prometheus.NewDesc("watchdoctor_read_instances",
		"API server instances the last look read, each a process of its own, by route: own_address, or load_balancer (through the kubeconfig host, one connection per instance).",
		[]string{"apiserver", "route"}, nil)
	descClosures = prometheus.NewDesc("watchdoctor_watch_closures_total",
		"Watchers the API server closed for not keeping up (growth of apiserver_terminated_watchers_total between looks of one process), per resource.",
		[]string{"apiserver", "resource"}, nil)
	descClientClosures = prometheus.NewDesc("watchdoctor_watch_closures_by_client_total",
		"The closures of watchdoctor_watch_closures_total by the client tied to them: its user, \"ambiguous\" when several came back, \"unknown\" when none could be tied.",
		[]string{"apiserver", "resource", "user"}, nil)
	descInterval = prometheus.NewDesc("watchdoctor_look_interval_seconds",
		"The configured time between looks.",
		nil, nil)
)

var allDescs = []*prometheus.Desc{descInitializing, descOldest, descSeats, descLimit, descStates, descUserWatches, descUserSeats, descUserOldest, descLookErrors, descLastLook, descLastDuration, descLastSuccess, descLastPause, descLastPauseMax, descPauseTotal, descLooks, descLastComplete, descInterval, descTraceWindow, descTraceBytes, descTracePause, descLiveInstances, descReadInstances, descClosures, descClientClosures}

// collector is the Exporter seen as a prometheus.Collector: it writes the
// last published snapshot as constant metrics.
type collector Exporter

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, s := range c.snap {
		collectInstance(s, gauge)
		if v, ok := c.pauseTotal[s.name]; ok {
			counter(descPauseTotal, v, s.name)
		}
	}
	for name, t := range c.traces {
		gauge(descTraceWindow, t.window, name)
		counter(descTraceBytes, t.bytes, name)
		if t.pause != nil {
			gauge(descTracePause, *t.pause, name)
		}
	}
	for k, v := range c.errs {
		counter(descLookErrors, v, k[0], k[1])
	}
	for r, v := range c.looks {
		counter(descLooks, v, r)
	}
	last := 0.0
	if !c.lastComplete.IsZero() {
		last = float64(c.lastComplete.UnixNano()) / 1e9
	}
	gauge(descLastComplete, last)
	c.coverage.collect(c.discoveryName, gauge)
	c.closures.collect(counter)
	gauge(descInterval, c.cfg.Interval.Seconds())
}

func collectInstance(s instanceSnap, gauge func(*prometheus.Desc, float64, ...string)) {
	if !s.at.IsZero() {
		gauge(descLastLook, float64(s.at.UnixNano())/1e9, s.name)
	}
	gauge(descLastDuration, s.took.Seconds(), s.name)
	success := 0.0
	if s.ok {
		success = 1
	}
	gauge(descLastSuccess, success, s.name)
	if s.pause != nil {
		gauge(descLastPause, s.pause.Sum, s.name)
		gauge(descLastPauseMax, s.pause.LargestAtMost, s.name)
	}
	for _, r := range s.resources {
		gauge(descInitializing, float64(r.watches), s.name, r.resource, r.level)
		gauge(descOldest, r.oldest, s.name, r.resource, r.level)
	}
	for _, l := range s.levels {
		gauge(descSeats, float64(l.seats), s.name, l.level)
		if l.limit != nil {
			gauge(descLimit, *l.limit, s.name, l.level)
		}
	}
	for state, n := range s.states {
		gauge(descStates, float64(n), s.name, state)
	}
	for _, u := range s.users {
		gauge(descUserWatches, float64(u.watches), s.name, u.user, u.resource)
		gauge(descUserSeats, float64(u.seats), s.name, u.user, u.resource)
		gauge(descUserOldest, u.oldest, s.name, u.user, u.resource)
	}
}
