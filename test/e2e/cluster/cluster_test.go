package cluster

import (
	"bufio"
	"net"
	"os/exec"
	"testing"
	"time"
)

// TestTCPBalancerTurnsAndSkipsARefusingBackend: each connection goes to the
// next backend; one that refuses is skipped for the one after it.
func TestTCPBalancerTurnsAndSkipsARefusingBackend(t *testing.T) {
	serve := func(name string) string {
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
	var got []string
	for range 4 {
		c, err := net.DialTimeout("tcp", b.Address(), 5*time.Second)
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
	// Turns 0..3 start at backends a, dead (-> b), b, a.
	if want := "a b b a"; joinSpace(got) != want {
		t.Errorf("connections went to %q, want %q", joinSpace(got), want)
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
