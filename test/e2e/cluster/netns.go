package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvNetns is set by test/e2e/run.sh, inside the network namespace it
// created for the suite, to that namespace's identity (the target of
// /proc/self/ns/net, e.g. "net:[4026532281]").
const EnvNetns = "WATCH_DOCTOR_E2E_NETNS"

// The addresses test/e2e/run.sh puts on the namespace's lo: the load
// balancer's and one per API server instance of an HA cluster. They belong
// to TEST-NET-2 (198.51.100.0/24) and exist only inside that namespace.
const (
	LBAddress = "198.51.100.10"
)

// InstanceAddresses are the HA cluster's instance addresses, on lo.
func InstanceAddresses() []string {
	return []string{"198.51.100.11", "198.51.100.12", "198.51.100.13"}
}

// clientNetworkAddress is the address of the client network's end of its
// veth pair (see StartClientNetwork).
const clientNetworkAddress = "198.51.100.2"

// CheckIsolatedNetwork refuses to run the suite anywhere but in the network
// namespace test/e2e/run.sh created: $WATCH_DOCTOR_E2E_NETNS must name the
// current namespace, and lo must be its only interface, so no packet the
// suite sends can leave the machine.
func CheckIsolatedNetwork() error {
	howTo := "run the e2e tests through test/e2e/run.sh (or `make e2e`), which creates a network namespace with only lo; " +
		"one test: test/e2e/run.sh -run TestName -v"
	want := os.Getenv(EnvNetns)
	if want == "" {
		return fmt.Errorf("$%s is not set: the e2e tests run only inside the network namespace of test/e2e/run.sh: %s", EnvNetns, howTo)
	}
	got, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return fmt.Errorf("reading this process's network namespace: %w", err)
	}
	if got != want {
		return fmt.Errorf("$%s=%q but this process runs in network namespace %q: %s", EnvNetns, want, got, howTo)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return fmt.Errorf("listing network interfaces: %w", err)
	}
	var names []string
	for _, i := range ifaces {
		names = append(names, i.Name)
	}
	if len(names) != 1 || names[0] != "lo" {
		return fmt.Errorf("network namespace %s has interfaces %s, want only lo: %s", got, strings.Join(names, ", "), howTo)
	}
	if ifaces[0].Flags&net.FlagUp == 0 {
		return fmt.Errorf("lo is down in network namespace %s: test/e2e/run.sh brings it up", got)
	}
	return nil
}

// checkOnLoopback fails unless every address is assigned to lo.
func checkOnLoopback(addrs ...string) error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	have, err := lo.Addrs()
	if err != nil {
		return err
	}
	on := map[string]bool{}
	for _, a := range have {
		if n, ok := a.(*net.IPNet); ok {
			on[n.IP.String()] = true
		}
	}
	for _, a := range addrs {
		if !on[a] {
			return fmt.Errorf("%s is not an address of lo in this network namespace: test/e2e/run.sh adds %s and %s", a, LBAddress, strings.Join(InstanceAddresses(), ", "))
		}
	}
	return nil
}

// ClientNetwork is a second network namespace, nested in the suite's, for a
// client that sits outside the cluster's network: a veth pair joins it to
// the suite's namespace and its only route leads to the load balancer, so
// the API server instances' own addresses are unreachable from it
// ("network is unreachable"), as from a laptop in front of a managed
// cluster.
//
// The namespace lives as long as a holder process (sleep) started in it;
// Close kills the holder, and the kernel then removes the namespace and the
// veth pair. The holder dies with the test binary too (Pdeathsig).
type ClientNetwork struct {
	holder *exec.Cmd
	done   chan struct{}
}

// StartClientNetwork creates the client network, reaching only lbAddress
// (an address on the suite namespace's lo).
func StartClientNetwork(lbAddress string) (*ClientNetwork, error) {
	holder := exec.Command("sleep", "infinity")
	holder.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if err := holder.Start(); err != nil {
		return nil, fmt.Errorf("start a process in a new network namespace: %w", err)
	}
	n := &ClientNetwork{holder: holder, done: make(chan struct{})}
	go func() { holder.Wait(); close(n.done) }()
	pid := strconv.Itoa(holder.Process.Pid)
	host, peer := "wdh"+pid, "wdc"+pid // at most 15 bytes (IFNAMSIZ)
	in := []string{"nsenter", "--target", pid, "--net", "--"}
	for _, cmd := range [][]string{
		{"ip", "link", "add", host, "type", "veth", "peer", "name", peer, "netns", pid},
		{"ip", "link", "set", host, "up"},
		{"ip", "route", "add", clientNetworkAddress + "/32", "dev", host},
		append(in, "ip", "link", "set", "lo", "up"),
		append(in, "ip", "link", "set", peer, "up"),
		append(in, "ip", "addr", "add", clientNetworkAddress+"/32", "dev", peer),
		append(in, "ip", "route", "add", lbAddress+"/32", "dev", peer),
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			return nil, errors.Join(fmt.Errorf("client network: %s: %w: %s", strings.Join(cmd, " "), err, out), n.Close())
		}
	}
	return n, nil
}

// Command returns a command that runs name inside the client network.
func (n *ClientNetwork) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--target", strconv.Itoa(n.holder.Process.Pid), "--net", "--", name}, args...)...)
}

// Close kills the holder; the namespace and its veth pair go with it.
func (n *ClientNetwork) Close() error {
	if err := n.holder.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop the client network's holder: %w", err)
	}
	select {
	case <-n.done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("the client network's holder did not exit within 10s of SIGKILL")
	}
}
