package e2e

// Time series of a patched-server run, for the replay-versus-real
// comparison (replay_vs_real_test.go): the watch goroutines of each
// transport read from a goroutine dump, and the HTTP/1.1 client
// (@kubernetes/client-node) with the state of its TCP connection.

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/watch-doctor/watch-doctor/test/e2e/cluster"
	"github.com/watch-doctor/watch-doctor/test/e2e/probe"
)

// The transports of the patched-server runs' clients: the slow informer
// and the paced reader (client-go) speak HTTP/2, the node reader
// (@kubernetes/client-node) HTTP/1.1.
const (
	transportH2 = probe.TransportH2
	transportH1 = probe.TransportH1
)

// nodeStartAfter is when the node reader starts, after the other clients:
// late enough that its stall, which comes the stall timeout after its
// watcher's last send, is logged after the slow informer's (at most the
// timeout + 5 s, checkStallRun), so the server's log lines tell the two
// apart.
const nodeStartAfter = 5 * time.Second

// nodeWatch is clients/stuck-watch.js run by node as the node-reader user:
// it reads one event of a watch with initial events, then blocks its
// event loop, so nothing reads its socket any more.
type nodeWatch struct {
	cmd    *exec.Cmd
	done   chan struct{}
	port   string
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
}

// startNodeWatch starts the node reader on namespace's pods; it is killed
// on cleanup (registered by the caller through stop).
func startNodeWatch(t *testing.T, c *cluster.Cluster, namespace string) (*nodeWatch, error) {
	t.Helper()
	dir := attrClientsDir(t)
	u, err := url.Parse(c.Server())
	if err != nil {
		return nil, err
	}
	n := &nodeWatch{done: make(chan struct{}), port: u.Port()}
	n.cmd = exec.Command("node", filepath.Join(dir, "stuck-watch.js"), "/api/v1/namespaces/"+namespace+"/pods")
	n.cmd.Dir = dir
	n.cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig(cluster.UserNodeReader))
	n.cmd.Stdout = lockedWriter{&n.mu, &n.stdout}
	n.cmd.Stderr = lockedWriter{&n.mu, &n.stderr}
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	go func() { n.cmd.Wait(); close(n.done) }()
	return n, nil
}

// stop kills the node process group and returns what it wrote on stderr.
func (n *nodeWatch) stop() string {
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	<-n.done
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.TrimSpace(n.stderr.String())
}

// output returns what the node process wrote so far, and whether it exited.
func (n *nodeWatch) output() (stdout, stderr string, exited bool) {
	select {
	case <-n.done:
		exited = true
	default:
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stdout.String(), n.stderr.String(), exited
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// nodeSocket is the client side of the node reader's connection to the API
// server, read from /proc/PID/net/tcp{,6} (the process's own network
// namespace) and its file descriptors.
type nodeSocket struct {
	// State is the TCP state (ESTABLISHED, CLOSE_WAIT once the server's
	// FIN arrived, ...), "gone" when the process holds no socket to the
	// server any more, "" before it connected.
	State string
	// RecvQ is the data received and not read by the client.
	RecvQ int
	// ServerState and ServerSendQ are the server's end of the same
	// connection (its state, "gone" once closed and released, and the
	// data it has not sent), read from this process's /proc/net/tcp: the
	// tests run in the servers' network namespace.
	ServerState string
	ServerSendQ int
	localPort   string
}

// told reports whether the client's kernel learnt that the server ended the
// connection: a FIN (CLOSE_WAIT, LAST_ACK, CLOSE) or a reset (socket gone).
func (s nodeSocket) told() bool {
	return s.State != "" && s.State != "ESTABLISHED"
}

// tcpEntry is one line of /proc/net/tcp{,6}.
type tcpEntry struct {
	local, remote, state, inode string
	txQueue, rxQueue            int
}

// readTCP reads /proc/PID/net/tcp and tcp6 ("self" for this process).
func readTCP(pid string) ([]tcpEntry, error) {
	var out []tcpEntry
	for _, file := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%s/net/%s", pid, file))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st tx_queue:rx_queue tr tm->when retrnsmt uid timeout inode
			fs := strings.Fields(line)
			if len(fs) < 10 {
				continue
			}
			e := tcpEntry{local: fs[1], remote: fs[2], state: tcpStates[fs[3]], inode: fs[9]}
			if tx, rx, ok := strings.Cut(fs[4], ":"); ok {
				v, _ := strconv.ParseInt(tx, 16, 64)
				e.txQueue = int(v)
				v, _ = strconv.ParseInt(rx, 16, 64)
				e.rxQueue = int(v)
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// port returns the hexadecimal port of a /proc/net/tcp address.
func port(addr string) string {
	_, p, _ := strings.Cut(addr, ":")
	return p
}

var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "06": "TIME_WAIT",
	"07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

// socket reads the node reader's connection to the server. With several,
// an ESTABLISHED one wins (the watch's: client-node opens one connection
// for it). prev is the previous reading: once connected, no socket reads as
// "gone".
func (n *nodeWatch) socket(prev nodeSocket) (nodeSocket, error) {
	pid := n.cmd.Process.Pid
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return prev, fmt.Errorf("node reader's file descriptors: %w", err)
	}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	wantPort := fmt.Sprintf("%04X", mustAtoi(n.port))
	entries, err := readTCP(strconv.Itoa(pid))
	if err != nil {
		return prev, err
	}
	var found []nodeSocket
	for _, e := range entries {
		if inodes[e.inode] && port(e.remote) == wantPort {
			found = append(found, nodeSocket{State: e.state, RecvQ: e.rxQueue, localPort: port(e.local)})
		}
	}
	var s nodeSocket
	switch {
	case len(found) == 0 && prev.State != "":
		s = nodeSocket{State: "gone", localPort: prev.localPort}
	case len(found) == 0:
		return nodeSocket{}, nil
	default:
		s = found[0]
		for _, f := range found {
			if f.State == "ESTABLISHED" {
				s = f
			}
		}
	}
	// The server's end: local port the API server's, remote the client's.
	self, err := readTCP("self")
	if err != nil {
		return prev, err
	}
	s.ServerState = "gone"
	for _, e := range self {
		if port(e.local) == wantPort && port(e.remote) == s.localPort && e.state != "LISTEN" {
			s.ServerState, s.ServerSendQ = e.state, e.txQueue
		}
	}
	return s, nil
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// seconds formats a duration as seconds with one decimal.
func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
