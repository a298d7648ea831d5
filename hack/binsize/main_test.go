package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testMods = map[string]string{
	"github.com/watch-doctor/watch-doctor": "(this module)",
	"k8s.io/api":                           "v0.37.2",
	"k8s.io/apiserver":                     "v0.37.2",
	"sigs.k8s.io/yaml":                     "v1.6.0",
}

func TestModuleOf(t *testing.T) {
	paths := []string{"github.com/watch-doctor/watch-doctor", "k8s.io/apiserver", "sigs.k8s.io/yaml", "k8s.io/api"}
	tests := []struct{ sym, want string }{
		{sym: "k8s.io/api/core/v1.(*PodSpec).Unmarshal", want: "k8s.io/api"},
		{sym: "k8s.io/apiserver/pkg/storage/cacher.(*Cacher).Watch", want: "k8s.io/apiserver"},
		{sym: "type:k8s.io/api/core/v1.Pod", want: "k8s.io/api"},
		{sym: "type:.eq.k8s.io/api/core/v1.PodIP", want: "k8s.io/api"},
		{sym: "go:itab.*k8s.io/api/core/v1.Pod,k8s.io/apimachinery/pkg/runtime.Object", want: "k8s.io/api"},
		{sym: "github.com/watch-doctor/watch-doctor/internal/cli.Main", want: "github.com/watch-doctor/watch-doctor"},
		{sym: "sigs.k8s.io/yaml.Marshal", want: "sigs.k8s.io/yaml"},
		{sym: "runtime.mallocgc", want: stdRow},
		{sym: "encoding/json.Marshal", want: stdRow},
		{sym: "vendor/golang.org/x/net/http2/hpack.init", want: stdRow},
		{sym: "go:string.*", want: unattributedRow},
		{sym: "k8s.io/apis.Other", want: unattributedRow},
	}
	for _, tt := range tests {
		t.Run(tt.sym, func(t *testing.T) {
			if got := moduleOf(tt.sym, paths); got != tt.want {
				t.Errorf("moduleOf(%q) = %q, want %q", tt.sym, got, tt.want)
			}
		})
	}
}

func TestBySymbolModuleAndTable(t *testing.T) {
	nm := []byte(`  4a0000       1000 T k8s.io/api/core/v1.(*Pod).Marshal
  4a1000        500 R type:k8s.io/api/core/v1.Pod
  4a2000        300 T runtime.main
  4a3000        200 T github.com/watch-doctor/watch-doctor/internal/cli.Main
           0 U some.undefined
  4a4000          0 D go:string.*
  900000   33554432 D crypto/internal/fips140/drbg.memory
`)
	sizes, total, err := bySymbolModule(nm, testMods, []addrRange{{0x900000, 0x900000 + 33554432}})
	if err != nil {
		t.Fatal(err)
	}
	if total != 2000 {
		t.Errorf("total = %d, want 2000", total)
	}
	var b bytes.Buffer
	writeTable(&b, sizes, testMods, total)
	want := strings.Join([]string{
		"| module | version | symbol bytes | share |",
		"|---|---|---:|---:|",
		"| `k8s.io/api` | v0.37.2 | 1,500 | 75.0% |",
		"| `github.com/watch-doctor/watch-doctor` | (this module) | 200 | 10.0% |",
		"| `k8s.io/apiserver` | v0.37.2 | 0 | 0.0% |",
		"| `sigs.k8s.io/yaml` | v1.6.0 | 0 | 0.0% |",
		"| " + stdRow + " | | 300 | 15.0% |",
		"| " + unattributedRow + " | | 0 | 0.0% |",
		"",
	}, "\n")
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestBySymbolModuleBadSize(t *testing.T) {
	_, _, err := bySymbolModule([]byte("  4a0000 many T x.y\n"), testMods, nil)
	if err == nil || !strings.Contains(err.Error(), `"  4a0000 many T x.y"`) {
		t.Errorf("error = %v, want one quoting the line", err)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 49946786: "49,946,786"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
