// Command idorder measures, on a real kube-apiserver, how often the order of
// watch handler goroutine ids matches the order in which the watch
// requests arrived (APF dump_requests ArriveTime): the heuristic
// watch-doctor no longer relies on to pair watchers with requests.
//
// Each run starts one stuck initial-events watch on each of three
// resources (pods, configmaps, secrets), each with its own user and
// connection, in random order, with a chosen gap between starts. The
// truth of which handler serves which user comes from the object type its
// (*watchEncoder).doEncode frame prints, learnt per resource beforehand
// with one watch at a time.
//
//	eval "$(test/e2e/hack/build-binaries.sh)"; export KUBE_APISERVER_BIN ETCD_BIN
//	cd test/e2e && go run ./cmd/idorder -runs 20 -gaps 0-50ms,1s,10s
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
	"github.com/watch-doctor/watch-doctor/test/e2e/workload"
)

const namespace = "idorder"

var (
	resources = []string{"pods", "configmaps", "secrets"}
	users     = []string{cluster.UserCurlReader, cluster.UserKubectlReader, cluster.UserNodeReader}
)

func main() {
	runs := flag.Int("runs", 20, "runs per gap")
	gaps := flag.String("gaps", "0-50ms,1s,10s", "gaps between starts: a duration, or a range lo-hi drawn uniformly")
	flag.Parse()
	if err := run(*runs, strings.Split(*gaps, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "idorder:", err)
		os.Exit(1)
	}
}

func run(runs int, gaps []string) error {
	dir, err := os.MkdirTemp("", "idorder-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	c, err := cluster.Start(ctx, cluster.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer c.Stop()
	cs, err := c.LoaderClientset(500)
	if err != nil {
		return err
	}
	if err := workload.CreatePods(ctx, cs, workload.PodsOptions{Namespace: namespace, Count: 600, AnnotationBytes: 20 << 10, Workers: 16}); err != nil {
		return err
	}
	if err := createPayloads(ctx, cs); err != nil {
		return err
	}
	// Learn each resource's object type, one watch at a time.
	typeOf := map[string]string{} // itab -> resource
	for i, r := range resources {
		stop, err := startWatch(ctx, c, users[i], r)
		if err != nil {
			return err
		}
		hs, err := waitHandlers(ctx, cs.RESTClient(), 1)
		stop()
		if err != nil {
			return fmt.Errorf("calibrating %s: %w", r, err)
		}
		typeOf[hs[0].itab] = r
		if err := waitIdle(ctx, cs.RESTClient()); err != nil {
			return err
		}
	}
	fmt.Printf("object types: %v\n", typeOf)
	rng := mrand.New(mrand.NewPCG(uint64(time.Now().UnixNano()), 0))
	fmt.Printf("| gap between starts | runs | id order = arrival order (whole run) | pairs in arrival order |\n|---|---|---|---|\n")
	for _, g := range gaps {
		lo, hi, err := parseGap(g)
		if err != nil {
			return err
		}
		whole, pairs, pairsOK := 0, 0, 0
		for range runs {
			perm := rng.Perm(len(resources))
			var stops []func()
			for k, i := range perm {
				if k > 0 {
					time.Sleep(lo + time.Duration(rng.Int64N(int64(hi-lo)+1)))
				}
				stop, err := startWatch(ctx, c, users[i], resources[i])
				if err != nil {
					return err
				}
				stops = append(stops, stop)
			}
			hs, err := waitHandlers(ctx, cs.RESTClient(), len(resources))
			if err != nil {
				return err
			}
			reqs, err := probe.APFRequests(ctx, cs.RESTClient())
			if err != nil {
				return err
			}
			arrive := map[string]time.Time{} // resource -> arrival
			for _, r := range reqs {
				if r.Executing() && strings.EqualFold(r.Verb, "watch") && !strings.HasPrefix(r.UserName, "system:") {
					t, err := time.Parse(time.RFC3339Nano, r.ArriveTime)
					if err != nil {
						return err
					}
					arrive[r.Resource] = t
				}
			}
			byID := make([]string, 0, len(hs))
			for _, h := range hs {
				byID = append(byID, typeOf[h.itab])
			}
			byArrival := append([]string(nil), resources...)
			sort.Slice(byArrival, func(a, b int) bool { return arrive[byArrival[a]].Before(arrive[byArrival[b]]) })
			if strings.Join(byID, ",") == strings.Join(byArrival, ",") {
				whole++
			}
			for a := range byID {
				for b := a + 1; b < len(byID); b++ {
					pairs++
					if arrive[byID[a]].Before(arrive[byID[b]]) {
						pairsOK++
					}
				}
			}
			for _, stop := range stops {
				stop()
			}
			if err := waitIdle(ctx, cs.RESTClient()); err != nil {
				return err
			}
		}
		fmt.Printf("| %s | %d | %d/%d (%.0f%%) | %d/%d (%.0f%%) |\n", g, runs, whole, runs, 100*float64(whole)/float64(runs), pairsOK, pairs, 100*float64(pairsOK)/float64(pairs))
	}
	return nil
}

func parseGap(s string) (lo, hi time.Duration, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		d, err := time.ParseDuration(s)
		return d, d, err
	}
	if !strings.ContainsAny(a, "smh") {
		a += strings.TrimLeft(b, "0123456789.")
	}
	if lo, err = time.ParseDuration(a); err != nil {
		return 0, 0, err
	}
	hi, err = time.ParseDuration(b)
	return lo, hi, err
}

// startWatch opens a stuck initial-events watch on resource as user, on a
// connection of its own; it reads nothing.
func startWatch(ctx context.Context, c *cluster.Cluster, user, resource string) (func(), error) {
	cfg, err := c.RESTConfig(user)
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second}).DialContext
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	opts := workload.InitialEventsListOptions()
	var w watch.Interface
	switch resource {
	case "pods":
		w, err = cs.CoreV1().Pods(namespace).Watch(ctx, opts)
	case "configmaps":
		w, err = cs.CoreV1().ConfigMaps(namespace).Watch(ctx, opts)
	case "secrets":
		w, err = cs.CoreV1().Secrets(namespace).Watch(ctx, opts)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s as %s: %w", resource, user, err)
	}
	return func() { cancel(); w.Stop() }, nil
}

type handler struct {
	id   int64
	itab string
}

var (
	headerRE   = regexp.MustCompile(`^goroutine (\d+) `)
	doEncodeRE = regexp.MustCompile(`\(\*watchEncoder\)\.doEncode\(0x[0-9a-f]+, \{(0x[0-9a-f]+), `)
)

// waitHandlers waits until n watch handlers are blocked encoding, and
// returns them by goroutine id.
func waitHandlers(ctx context.Context, c rest.Interface, n int) ([]handler, error) {
	var hs []handler
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		dump, err := probe.GoroutineDump(ctx, c)
		if err != nil {
			return false, err
		}
		hs = nil
		for _, block := range strings.Split(dump, "\n\n") {
			if !strings.Contains(block, "(*WatchServer).HandleHTTP(") {
				continue
			}
			m, h := doEncodeRE.FindStringSubmatch(block), headerRE.FindStringSubmatch(block)
			if m == nil || h == nil {
				continue
			}
			id, _ := strconv.ParseInt(h[1], 10, 64)
			hs = append(hs, handler{id: id, itab: m[1]})
		}
		return len(hs) == n, nil
	})
	sort.Slice(hs, func(a, b int) bool { return hs[a].id < hs[b].id })
	if err != nil {
		return nil, fmt.Errorf("%d handlers blocked encoding, want %d: %w", len(hs), n, err)
	}
	return hs, nil
}

// waitIdle waits until no watch of the workload's users executes.
func waitIdle(ctx context.Context, c rest.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		reqs, err := probe.APFRequests(ctx, c)
		if err != nil {
			return false, err
		}
		for _, r := range reqs {
			if r.Executing() && strings.EqualFold(r.Verb, "watch") && !strings.HasPrefix(r.UserName, "system:") {
				return false, nil
			}
		}
		return true, nil
	})
}

func createPayloads(ctx context.Context, cs kubernetes.Interface) error {
	raw := make([]byte, 300<<10)
	for i := range 30 {
		if _, err := rand.Read(raw); err != nil {
			return err
		}
		data := base64.StdEncoding.EncodeToString(raw)
		name := fmt.Sprintf("payload-%03d", i)
		if _, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"payload": data}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"payload": []byte(data)}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
