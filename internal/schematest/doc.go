// Package schematest holds no code: its test generates docs/schemas from the
// output types and validates every golden document against them.
package schematest
