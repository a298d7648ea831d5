// Package archtest holds no code: its test keeps docs/architecture.md true by
// failing when a package of this module imports against the drawn layers.
package archtest
