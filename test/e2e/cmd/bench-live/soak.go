package main

// The soak of kubectl watch-doctor serve (bench-live -soak 10m; not in CI):
// serve looks every -soak-interval at a kube-apiserver holding -watches
// idle watches and the stuck ones, for the soak's duration. It reports
// serve's resident memory (first, last and largest scrape of its own
// process_resident_memory_bytes) and, per look, the API server's non-GC
// stop-the-world time that serve measured around it
// (watchdoctor_last_look_server_pause_seconds, from its "look" log records).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
)

type lookRecord struct {
	Msg         string  `json:"msg"`
	Address     string  `json:"address"`
	Duration    float64 `json:"duration_seconds"`
	Pause       float64 `json:"server_pause_seconds"`
	Pauses      float64 `json:"server_pauses"`
	PauseMax    float64 `json:"server_pause_max_seconds"`
	Initalizing int     `json:"initializing"`
}

func soak(d, interval time.Duration, watches, stuck int) error {
	bin := os.Getenv("WATCH_DOCTOR_BIN")
	if bin == "" {
		return fmt.Errorf("-soak needs $WATCH_DOCTOR_BIN, the built plugin (make build)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := startLoaded(ctx, stuck)
	if err != nil {
		return err
	}
	defer env.stop()
	logf("opening %d idle watches", watches)
	if err := openIdle(ctx, env.load, env.admin.Host, watches); err != nil {
		return err
	}
	fetch, err := newClient(env.admin)
	if err != nil {
		return err
	}
	g, err := goroutines(ctx, fetch, env.admin.Host)
	if err != nil {
		return err
	}
	logf("API server: %d goroutines; starting serve for %s, a look every %s", g, d, interval)
	cmd := exec.Command(bin, "serve", "--kubeconfig", env.c.Kubeconfig(cluster.UserWatchDoctor), "--listen-address", "127.0.0.1:0",
		"--interval", interval.String(), "--jitter", "0", "--request-timeout", "60s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	addr := make(chan string, 1)
	looks := make(chan lookRecord, 1024)
	go readLog(stderr, addr, looks)
	var a string
	select {
	case a = <-addr:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		return fmt.Errorf("serve did not say where it serves")
	}
	var rss, heap, gs []float64
	var recs []lookRecord
	end := time.Now().Add(d)
	for tick := time.NewTicker(interval); time.Now().Before(end); <-tick.C {
		b, err := get(ctx, fetch, "http://"+a+"/metrics")
		if err != nil {
			logf("scraping serve: %v", err)
			continue
		}
		if v, ok := sample(b, "process_resident_memory_bytes"); ok {
			rss = append(rss, v)
		}
		if v, ok := sample(b, "go_memstats_heap_inuse_bytes"); ok {
			heap = append(heap, v)
		}
		if v, ok := sample(b, "go_goroutines"); ok {
			gs = append(gs, v)
		}
	drain:
		for {
			select {
			case r := <-looks:
				recs = append(recs, r)
			default:
				break drain
			}
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	werr := cmd.Wait()
	g2, _ := goroutines(ctx, fetch, env.admin.Host)
	report(d, interval, watches, stuck, g, g2, rss, recs)
	trend("serve heap in use (go_memstats_heap_inuse_bytes)", heap, interval, 1<<20, "MiB")
	trend("serve RSS", rss, interval, 1<<20, "MiB")
	trend("serve goroutines", gs, interval, 1, "goroutines")
	if werr != nil {
		return fmt.Errorf("serve after SIGTERM: %w", werr)
	}
	return nil
}

func readLog(r io.Reader, addr chan<- string, looks chan<- lookRecord) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec lookRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Msg {
		case "serving":
			addr <- rec.Address
		case "look":
			select {
			case looks <- rec:
			default:
			}
		case "look error", "look failed: backing off", "look failed: no API server instance found":
			fmt.Fprintln(os.Stderr, "serve: "+sc.Text())
		}
	}
}

// sample is the value of an unlabelled sample of the exposition text b.
func sample(b []byte, name string) (float64, bool) {
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

func report(d, interval time.Duration, watches, stuck, g, g2 int, rss []float64, recs []lookRecord) {
	mib := func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	fmt.Printf("serve soak: %s, a look every %s, %d idle + %d stuck watches; API server goroutines %d at the start, %d at the end\n", d, interval, watches, stuck, g, g2)
	if len(rss) > 0 {
		at := func(f float64) string { return mib(rss[min(len(rss)-1, int(f*float64(len(rss))))]) }
		fmt.Printf("serve RSS over %d scrapes, one per look interval: first %s, then at 10%% %s, 25%% %s, 50%% %s, 75%% %s of the soak, last %s, max %s\n",
			len(rss), mib(rss[0]), at(0.1), at(0.25), at(0.5), at(0.75), mib(rss[len(rss)-1]), mib(slices.Max(rss)))
	}
	if len(recs) == 0 {
		fmt.Println("no look recorded")
		return
	}
	var pauses, walls, maxes []float64
	over := 0
	for _, r := range recs {
		pauses = append(pauses, r.Pause)
		walls = append(walls, r.Duration)
		maxes = append(maxes, r.PauseMax)
		if r.Pause >= 0.001 {
			over++
		}
	}
	slices.Sort(pauses)
	slices.Sort(walls)
	slices.Sort(maxes)
	ms := func(v float64) string { return fmt.Sprintf("%.3f ms", v*1000) }
	q := func(s []float64, f float64) float64 { return s[min(len(s)-1, int(f*float64(len(s))))] }
	fmt.Printf("looks: %d; API server non-GC stop-the-world per look: median %s, p90 %s, max %s; looks at or over 1 ms: %d; longest single pause per look at most (bucket bound): median %s, max %s\n",
		len(recs), ms(q(pauses, 0.5)), ms(q(pauses, 0.9)), ms(pauses[len(pauses)-1]), over, ms(q(maxes, 0.5)), ms(maxes[len(maxes)-1]))
	fmt.Printf("look wall time: median %.2f s, max %.2f s; initializing watches seen in the last look: %d\n", q(walls, 0.5), walls[len(walls)-1], recs[len(recs)-1].Initalizing)
}

// trend prints one scraped series: its lowest value in each quarter of
// the soak (after a collection the heap falls to what is live, so a leak
// raises the floor quarter by quarter whatever the garbage collector's
// sawtooth) and its least-squares slope over the second half, after the
// warm-up, in unit per 10 minutes.
func trend(name string, v []float64, interval time.Duration, scale float64, unit string) {
	if len(v) < 8 {
		return
	}
	var floors []string
	for q := range 4 {
		part := v[q*len(v)/4 : (q+1)*len(v)/4]
		floors = append(floors, fmt.Sprintf("%.1f", slices.Min(part)/scale))
	}
	half := v[len(v)/2:]
	var sx, sy, sxx, sxy float64
	for i, y := range half {
		x := float64(i) * interval.Minutes() / 10
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(half))
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	fmt.Printf("%s over %d scrapes: lowest per quarter %s %s; second half %.1f to %.1f %s, slope %+.2f %s per 10 min\n", name, len(v), strings.Join(floors, ", "), unit, slices.Min(half)/scale, slices.Max(half)/scale, unit, slope/scale, unit)
}
