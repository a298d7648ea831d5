// Package english phrases counts and numbers in the tool's messages, the
// same way in every engine: "1 watch", "3 watches", "743", "2.5"; and it
// holds the caller's words, Words, which every engine's messages point
// at. It imports nothing of ours, so every layer may use it.
package english

import (
	"fmt"
	"math"
)

// Plural returns one when n is 1, many otherwise.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count prints n and its noun: "1 watch", "3 watches".
func Count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, Plural(n, one, many))
}

// Number prints f whole when it is whole, else with one decimal: "743",
// "2.5".
func Number(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}
