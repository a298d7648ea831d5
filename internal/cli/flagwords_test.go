package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// kubeAPIServerFlags are kube-apiserver's own flags, which engine messages
// may name: they tell what the server runs with, not what to type to us.
var kubeAPIServerFlags = map[string]bool{
	"--profiling":                    true, // k8s.io/apiserver/pkg/server/options FeatureOptions
	"--enable-priority-and-fairness": true, // k8s.io/apiserver/pkg/server/options RecommendedOptions
	"--min-request-timeout":          true, // k8s.io/apiserver/pkg/server/options ServerRunOptions
}

var flagWord = regexp.MustCompile(`(^|[^-\w])(--[a-z][a-z0-9-]*)`)

// TestEnginesNameNoFlags keeps the flag vocabulary in internal/cli: no string
// literal in the non-test Go source of another package of the tool (under
// pkg/ and internal/, the test helpers aside) names a flag ("--x"). Engines return typed errors and values, or take the words
// they point the user at from their options, and this package phrases
// them (english.Words in model.Config, diagnosis.Options and bundle.Options).
func TestEnginesNameNoFlags(t *testing.T) {
	ours := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { ours["--"+f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { ours["--"+f.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard()))
	if !ours["--apiserver"] || !ours["--request-timeout"] {
		t.Fatalf("the command tree lists no --apiserver or --request-timeout: %d flags", len(ours))
	}
	for f := range kubeAPIServerFlags {
		if ours[f] {
			t.Errorf("%s is allowed as a kube-apiserver flag, but it is one of ours", f)
		}
	}

	fset := token.NewFileSet()
	files := 0
	skip := map[string]bool{filepath.Join("..", "cli"): true}
	for _, h := range []string{"archtest", "benchmetrics", "dumpgen", "fakeapiserver", "golden", "schematest"} {
		skip[filepath.Join("..", h)] = true
	}
	visit := func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || skip[path] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range flagWord.FindAllStringSubmatch(s, -1) {
				if !kubeAPIServerFlags[m[2]] {
					t.Errorf("%s: string literal names the flag %s: return a typed error or take the word from the options, and let internal/cli phrase it", fset.Position(lit.Pos()), m[2])
				}
			}
			return true
		})
		return nil
	}
	for _, root := range []string{filepath.Join("..", "..", "pkg"), ".."} {
		if err := filepath.WalkDir(root, visit); err != nil {
			t.Fatal(err)
		}
	}
	if files < 80 {
		t.Fatalf("read %d engine files, want the whole of pkg/ and internal/ but internal/cli and the test helpers", files)
	}
}

func TestFlagWordFindsFlags(t *testing.T) {
	for s, want := range map[string]string{
		"raise --max-pause (now 1s)": "--max-pause",
		"--force":                    "--force",
		"(--request-timeout 10s)":    "--request-timeout",
		"a-b --c":                    "--c",
		"x---y":                      "",
		"2026-11-29--x":              "",
		"-- not a flag":              "",
	} {
		got := ""
		if m := flagWord.FindStringSubmatch(s); m != nil {
			got = m[2]
		}
		if got != want {
			t.Errorf("flagWord in %q = %q, want %q", s, got, want)
		}
	}
}
