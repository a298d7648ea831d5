package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Measuring one process: wall and CPU time, peak RSS (through GNU time when
// it is installed), with a timeout that records how far it got.

// measurement is one process run.
type measurement struct {
	wall, user, sys time.Duration
	maxRSS          int64
	exit            int
	stdout, stderr  []byte
	timedOut        bool
}

// gnuTime is GNU time, used when present to take each child's peak RSS:
// a child's ru_maxrss starts from the RSS of the process that spawned it
// (Linux records the old address space's high-water mark at exec), so
// measured straight from this driver it could not go below the driver's
// own RSS; GNU time is small.
var gnuTime = func() string {
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		if exec.Command("/usr/bin/time", "-v", "-o", os.DevNull, "true").Run() == nil {
			return "/usr/bin/time"
		}
	}
	return ""
}()

func measure(timeout time.Duration, argv0 string, args ...string) (measurement, error) {
	return measureIn(timeout, "", argv0, args...)
}

// measureIn is measure with stdin read from a file ("" for none).
func measureIn(timeout time.Duration, stdin, argv0 string, args ...string) (measurement, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var cmd *exec.Cmd
	var timeOut string
	if gnuTime != "" {
		f, err := os.CreateTemp("", "wdbench-time-*.txt")
		if err != nil {
			return measurement{}, err
		}
		f.Close()
		timeOut = f.Name()
		defer os.Remove(timeOut)
		cmd = exec.CommandContext(ctx, gnuTime, append([]string{"-v", "-o", timeOut, argv0}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, argv0, args...)
	}
	// On timeout, note how far the measured process got (its peak RSS and
	// CPU time so far, lower bounds), then stop it and GNU time with it.
	var atCancel procSnapshot
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		if gnuTime != "" {
			pid = firstChild(pid)
		}
		atCancel = snapshot(pid)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	// stdout goes to a file, as `> report.json` does: through a pipe this
	// process would copy it while the measured one runs, on the same cores.
	outFile, err := os.CreateTemp("", "wdbench-stdout-*")
	if err != nil {
		return measurement{}, err
	}
	defer os.Remove(outFile.Name())
	defer outFile.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = outFile, &stderr
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			return measurement{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	start := time.Now()
	err = cmd.Run()
	m := measurement{wall: time.Since(start), stderr: stderr.Bytes()}
	stdout, readErr := os.ReadFile(outFile.Name())
	if readErr != nil {
		return m, readErr
	}
	m.stdout = stdout
	if ctx.Err() != nil {
		m.timedOut = true
		m.user, m.maxRSS = atCancel.cpu, atCancel.maxRSS
		return m, nil
	} else if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return m, fmt.Errorf("running %s: %w", argv0, err)
		}
	}
	st := cmd.ProcessState
	if st == nil {
		return m, nil
	}
	// wait4 reports the child with the descendants it waited for: the
	// measured process's CPU time, through GNU time too.
	m.exit = st.ExitCode()
	m.user, m.sys = st.UserTime(), st.SystemTime()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = maxRSSBytes(ru)
	}
	if timeOut != "" && !m.timedOut {
		b, err := os.ReadFile(timeOut)
		if err != nil {
			return m, err
		}
		rss, code, ok := parseGNUTime(b)
		if !ok {
			return m, fmt.Errorf("reading GNU time's report of %s: %q", argv0, firstLine(b))
		}
		m.maxRSS, m.exit = rss, code
	}
	return m, nil
}

// procSnapshot is what /proc says of a running process.
type procSnapshot struct {
	cpu    time.Duration
	maxRSS int64
}

// snapshot reads the peak RSS (VmHWM) and CPU time (utime+stime) of a
// running process from /proc; zero where /proc cannot tell.
func snapshot(pid int) procSnapshot {
	var s procSnapshot
	if pid <= 0 {
		return s
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				s.maxRSS = kb << 10
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the command name (which may hold spaces): state is
		// field 3, utime and stime fields 14 and 15, in clock ticks (100 Hz
		// on Linux).
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				s.cpu = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
	}
	return s
}

// firstChild returns the first child of pid (the process GNU time runs),
// or pid itself when /proc does not list children.
func firstChild(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return pid
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return pid
	}
	c, err := strconv.Atoi(f[0])
	if err != nil {
		return pid
	}
	return c
}

// parseGNUTime reads "Maximum resident set size (kbytes): N" and "Exit
// status: N" from the report of `time -v`.
func parseGNUTime(b []byte) (rss int64, exit int, ok bool) {
	var haveRSS, haveExit bool
	for _, line := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(strings.TrimSpace(line), ": ")
		if !found {
			continue
		}
		switch k {
		case "Maximum resident set size (kbytes)":
			n, err := strconv.ParseInt(v, 10, 64)
			rss, haveRSS = n<<10, err == nil
		case "Exit status":
			n, err := strconv.Atoi(v)
			exit, haveExit = n, err == nil
		}
	}
	return rss, exit, haveRSS && haveExit
}

func maxRSSBytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10 // kilobytes on Linux
}

// bestOf runs argv0 args runs times, each within timeout and checked by
// check, and returns the run of the best wall time and every run's wall
// time.
func bestOf(runs int, timeout time.Duration, check func(measurement) error, argv0 string, args ...string) (measurement, []time.Duration, error) {
	var best measurement
	var walls []time.Duration
	for i := range runs {
		m, err := measure(timeout, argv0, args...)
		if err != nil {
			return best, nil, err
		}
		if m.timedOut {
			return best, nil, fmt.Errorf("%s did not finish within %s (CPU %.1f s, peak RSS %.0f MiB so far)", args[0], timeout, m.user.Seconds(), float64(m.maxRSS)/(1<<20))
		}
		if err := check(m); err != nil {
			return best, nil, err
		}
		walls = append(walls, m.wall)
		if i == 0 || m.wall < best.wall {
			best = m
		}
	}
	return best, walls, nil
}

// passFail is a gate's verdict.
func passFail(ok bool) string { return map[bool]string{true: "PASS", false: "FAIL"}[ok] }
