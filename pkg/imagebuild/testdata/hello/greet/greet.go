// Package greet is a module the test program links, so its build
// information lists a dependency.
package greet

// Hello is the greeting.
func Hello() string { return "hello from an opctl-built image" }
