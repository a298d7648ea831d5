package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFailsOnCraftedProfile runs the command on a crafted module whose
// profile breaks both rules: each failure is named, file:line for a
// function, current against floor for a package.
func TestRunFailsOnCraftedProfile(t *testing.T) {
	root := fixtureTree(t)
	floors := filepath.Join(root, "floors.txt")
	if err := os.WriteFile(floors, []byte("internal/p 40\ninternal/q 70\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run([]string{"-root", root, "-profile", filepath.Join(root, "cover.out"), "-floors", floors}, &out)
	if !errors.Is(err, errFailed) {
		t.Fatalf("run = %v, want errFailed; output:\n%s", err, out.String())
	}
	for _, want := range []string{
		"FAIL internal/p: coverage 33.8% is under its floor 40.0%",
		"FAIL internal/p/p.go:56 Skipped (52 lines): over 50 lines and 0% covered by its package's tests",
		"FAIL internal/p/p.go:109 T.Orphan (52 lines)",
		"internal/q 75.0% 70.0%",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "Run (") || strings.Contains(out.String(), "FAIL internal/q") {
		t.Errorf("output fails what passes:\n%s", out.String())
	}
}

// TestRunPassesAndWrites: -write sets floors the same profile then passes
// (the long-function rule aside, which the fixture breaks on purpose, so the
// profile here runs every block).
func TestRunPassesAndWrites(t *testing.T) {
	root := fixtureTree(t)
	all := strings.ReplaceAll(fixtureProfile(), " 0\n", " 1\n")
	prof := filepath.Join(root, "all.out")
	if err := os.WriteFile(prof, []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	floors := filepath.Join(root, "floors.txt")
	args := []string{"-root", root, "-profile", prof, "-floors", floors}
	if err := run(append(args, "-write"), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(floors)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "internal/p 97\n") || !strings.Contains(string(data), "internal/q 97\n") {
		t.Errorf("written floors:\n%s", data)
	}
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Errorf("run = %v; output:\n%s", err, out.String())
	}
}

func TestRunUsageErrors(t *testing.T) {
	root := fixtureTree(t)
	for _, args := range [][]string{
		{"-root", root},
		{"-root", root, "-profile", filepath.Join(root, "missing.out")},
		{"-root", root, "-profile", filepath.Join(root, "cover.out"), "-floors", filepath.Join(root, "missing.txt")},
		{"-root", t.TempDir(), "-profile", filepath.Join(root, "cover.out")},
		{"-bogus"},
	} {
		if err := run(args, &bytes.Buffer{}); err == nil || errors.Is(err, errFailed) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("// c\nmodule \"example.com/q\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := modulePath(gomod); err != nil || got != "example.com/q" {
		t.Errorf("modulePath = %q, %v", got, err)
	}
	if err := os.WriteFile(gomod, []byte("go 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := modulePath(gomod); err == nil {
		t.Error("modulePath accepted a go.mod with no module line")
	}
}
