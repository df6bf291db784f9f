// Package examples holds the test that applies the project's examples/ to
// a running provider: every folder whole, and every file alone.
package examples
