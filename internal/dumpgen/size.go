package dumpgen

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a dump size in goroutines: "10000", "100k" or "1M".
func ParseSize(s string) (int, error) {
	mult, in := 1, s
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1_000_000, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("bad size %q: use a number of goroutines like 10000, 100k or 1M", in)
	}
	return n * mult, nil
}
