package cluster

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTCPBalancerTurnsAndSkipsARefusingBackend: each connection goes to the
// next backend; one that refuses is skipped for the one after it.
func TestTCPBalancerTurnsAndSkipsARefusingBackend(t *testing.T) {
	serve := func(name string) string { return nameServer(t, name) }
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()

	b, err := startTCPBalancer("127.0.0.1:0", []string{serve("a"), deadAddr, serve("b")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Turns 0..3 start at backends a, dead (-> b), b, a.
	if got, want := reachedBackends(t, b.Address(), 4), "a b b a"; got != want {
		t.Errorf("connections went to %q, want %q", got, want)
	}
}

// TestTCPBalancerSetDown: a backend set down gets no new connection, and
// gets them again once set up.
func TestTCPBalancerSetDown(t *testing.T) {
	serve := func(name string) string { return nameServer(t, name) }
	a, bAddr := serve("a"), serve("b")
	lb, err := startTCPBalancer("127.0.0.1:0", []string{a, bAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	reached := func(n int) string {
		return reachedBackends(t, lb.Address(), n)
	}
	if err := lb.SetDown(bAddr, true); err != nil {
		t.Fatal(err)
	}
	if got := reached(4); got != "a a a a" {
		t.Errorf("with b down, connections went to %q, want a only", got)
	}
	if err := lb.SetDown(bAddr, false); err != nil {
		t.Fatal(err)
	}
	if got := reached(2); got != "a b" && got != "b a" {
		t.Errorf("with b back, connections went to %q, want a and b", got)
	}
	if err := lb.SetDown("127.0.0.1:1", true); err == nil {
		t.Error("SetDown of an address that is not a backend: no error")
	}
}

// TestStartProcessWithItsOwnHostname: a process started with a hostname
// runs in a UTS namespace of its own with that hostname; this process's
// hostname is unchanged.
func TestStartProcessWithItsOwnHostname(t *testing.T) {
	before, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "hostname.log")
	p, err := startProcess("hostname", "wd-uts-test", "hostname", nil, nil, logPath)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	if p.waitErr != nil {
		t.Fatalf("hostname: %v\n%s", p.waitErr, p.logTail(5))
	}
	p.logFile.Close()
	if got := p.logTail(1); got != "wd-uts-test" {
		t.Errorf("the child's hostname is %q, want wd-uts-test", got)
	}
	if after, err := os.Hostname(); err != nil || after != before {
		t.Errorf("this process's hostname changed from %q to %q (%v)", before, after, err)
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

// TestProcessStartTime: the start time computed from /proc is the moment
// the child was started, to the clock tick.
func TestProcessStartTime(t *testing.T) {
	before := float64(time.Now().UnixNano()) / 1e9
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := float64(time.Now().UnixNano()) / 1e9
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	got, err := processStartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	// btime is whole seconds, so the sum may be off by up to a second.
	if got < before-1.02 || got > after+1.02 {
		t.Errorf("start time %.2f, want between %.2f and %.2f", got, before, after)
	}
}

// nameServer listens on a free loopback port and writes name to every
// connection, then closes it: which backend a connection reached.
func nameServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(name + "\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// reachedBackends opens n connections to the balancer at addr, one after
// another, and returns the names the backends wrote, space-separated.
func reachedBackends(t *testing.T, addr string, n int) string {
	t.Helper()
	var got []string
	for range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, line[:len(line)-1])
	}
	return joinSpace(got)
}
