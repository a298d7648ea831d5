// Command covercheck checks a coverage profile from make test's unit step
// (`go test -coverprofile`, each package measured by its own tests) against
// two rules: no function over 50 lines under cmd/, internal/ and pkg/ left
// unrun by its package's tests, and no package under its floor in
// floors.txt. It names each failure and exits 1. With -write it rewrites
// the floors from the profile instead.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "covercheck:", err)
		os.Exit(1)
	}
}

// errFailed reports that a rule failed (the failures are already written).
var errFailed = errors.New("coverage rules failed (docs/development.md, \"Coverage\")")

// run is main without the exit.
func run(args []string, w io.Writer) error {
	fl := flag.NewFlagSet("covercheck", flag.ContinueOnError)
	fl.SetOutput(w)
	profPath := fl.String("profile", "", "coverage profile written by go test -coverprofile")
	floorsPath := fl.String("floors", "hack/covercheck/floors.txt", "per-package coverage floors")
	root := fl.String("root", ".", "module root (holds go.mod)")
	write := fl.Bool("write", false, "rewrite the floors from the profile instead of checking")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *profPath == "" {
		return fmt.Errorf("-profile is required")
	}
	module, err := modulePath(filepath.Join(*root, "go.mod"))
	if err != nil {
		return err
	}
	pf, err := os.Open(*profPath)
	if err != nil {
		return err
	}
	defer pf.Close()
	p, err := parseProfile(pf, module)
	if err != nil {
		return fmt.Errorf("%s: %w", *profPath, err)
	}
	floors := map[string]float64{}
	if data, err := os.ReadFile(*floorsPath); err == nil {
		if floors, err = readFloors(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %w", *floorsPath, err)
		}
	} else if !*write {
		return err
	}
	if *write {
		var buf bytes.Buffer
		if err := writeFloors(&buf, p, floors); err != nil {
			return err
		}
		return os.WriteFile(*floorsPath, buf.Bytes(), 0o644)
	}
	return check(w, *root, p, floors)
}

// check applies both rules, writing the package table and each failure.
func check(w io.Writer, root string, p profile, floors map[string]float64) error {
	fails := checkFloors(w, root, p, floors)
	unrun, err := unrunLongFuncs(root, p)
	if err != nil {
		return err
	}
	for _, u := range unrun {
		fails = append(fails, fmt.Sprintf("%s: over %d lines and 0%% covered by its package's tests: test it there", u, longFunc))
	}
	for _, f := range fails {
		fmt.Fprintln(w, "FAIL", f)
	}
	if len(fails) > 0 {
		return errFailed
	}
	return nil
}

// modulePath reads the module line of a go.mod.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
