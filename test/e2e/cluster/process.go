package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one child binary (etcd or kube-apiserver) running in its own
// process group, with its stdout and stderr written to a log file.
//
// Thread safety: start and stop are called from one goroutine (the one that
// owns the Cluster); exited may be called from any goroutine.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{} // closed once cmd.Wait returned
	waitErr error         // set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// startProcess starts bin with args, with env added to this process's
// environment. A non-empty hostname runs the child in a UTS namespace of
// its own whose hostname is set before bin starts (see utsWrap). The
// child gets its own process group, so
// stop can signal everything it may have spawned, and is killed by the kernel
// if the test binary dies first (a go test -timeout panic, say). Pdeathsig
// fires when the OS thread that forked the child exits; the Go runtime only
// retires a thread when a goroutine exits while locked to it
// (runtime.LockOSThread), which the harness never does.
func startProcess(name, hostname, bin string, args, env []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if hostname != "" {
		bin, args = utsWrap(hostname, bin, args)
		sys.Cloneflags = syscall.CLONE_NEWUTS
	}
	cmd := exec.Command(bin, args...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
		fmt.Fprintf(logFile, "+ env %s\n", strings.Join(env, " "))
	}
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sys
	fmt.Fprintf(logFile, "+ %s %s\n", bin, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s (%q): %w", name, bin, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// utsWrap returns the command that, run in a new UTS namespace, sets its
// hostname and then execs bin with args: /bin/sh runs hostname(1), then
// replaces itself with bin, so the process keeps its PID and start time
// (which the tests compare with process_start_time_seconds) and its
// Pdeathsig. kube-apiserver names its identity lease after os.Hostname()
// (k8s.io/apiserver pkg/server/config.go:96-100 and 409-431 in v0.37.2:
// APIServerID is "apiserver-" and a hash of the hostname; k8s.io/kubernetes
// pkg/controlplane/apiserver/server.go:323-329 in v1.37.2 labels the lease
// kubernetes.io/hostname), so instances of one host need a namespace each
// to hold a lease each, as real HA instances on their own machines do.
func utsWrap(hostname, bin string, args []string) (string, []string) {
	return "/bin/sh", append([]string{"-c", `hostname "$0" && exec "$@"`, hostname, bin}, args...)
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return true, fmt.Errorf("%s exited with status 0", p.name)
		}
		return true, fmt.Errorf("%s exited: %w", p.name, p.waitErr)
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to grace for the process
// to end, then SIGKILLs the group. It returns once the process has been
// reaped. Later calls return the first call's result without signalling (the
// group id could belong to someone else by then).
func (p *process) stop(grace time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.terminate(grace) })
	return p.stopErr
}

// kill sends SIGKILL to the process group at once, as a crash would end the
// process, and reaps it. It shares stop's once: whichever comes first wins.
func (p *process) kill() error {
	p.stopOnce.Do(func() { p.stopErr = p.terminate(0) })
	return p.stopErr
}

// terminate does the work of stop and kill; it runs once, under stopOnce. A
// zero grace skips SIGTERM.
func (p *process) terminate(grace time.Duration) error {
	pgid := p.cmd.Process.Pid // Setpgid: the child leads a group of its own id
	var errs []error
	select {
	case <-p.done:
	default:
		if grace == 0 {
			break
		}
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("SIGTERM %s: %w", p.name, err))
		}
		timer := time.NewTimer(grace)
		select {
		case <-p.done:
			timer.Stop()
		case <-timer.C:
			errs = append(errs, fmt.Errorf("%s did not stop within %v of SIGTERM; killed", p.name, grace))
		}
	}
	// Whatever is left in the group (the leader after a missed grace period,
	// or anything it started) gets SIGKILL. ESRCH means the group is gone.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		errs = append(errs, fmt.Errorf("SIGKILL %s: %w", p.name, err))
	}
	<-p.done
	p.logFile.Close()
	return errors.Join(errs...)
}

// logTail returns the last n lines of the process log, for error messages.
func (p *process) logTail(n int) string {
	return tailFile(p.logPath, n)
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// memoryUsage reads the resident set size (now and peak) of a running
// process from /proc.
func memoryUsage(pid int) (rss, peak string, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "VmRSS":
			rss = strings.TrimSpace(v)
		case "VmHWM":
			peak = strings.TrimSpace(v)
		}
	}
	return rss, peak, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture Go supports (the kernel's ABI fixes it).
const clockTicks = 100

// processStartTime returns when pid started, in seconds since the epoch,
// computed as the Prometheus process collector computes
// process_start_time_seconds (prometheus/procfs: boot time from /proc/stat's
// btime plus /proc/PID/stat's starttime in clock ticks), so the two compare
// equal for the same process.
func processStartTime(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// the last ')'. starttime is field 22; after ") " come fields 3 and up.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, stat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command name, want at least 20", pid, len(fields))
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: starttime %q: %w", pid, fields[19], err)
	}
	procStat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(procStat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			btime, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: btime %q: %w", v, err)
			}
			return float64(btime) + float64(ticks)/clockTicks, nil
		}
	}
	return 0, errors.New("/proc/stat: no btime line")
}
