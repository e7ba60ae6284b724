// Package cli holds opctl's cobra commands. Commands are thin: they turn
// flags into calls on the pkg/ libraries and print the result in the format
// asked for with -o.
//
// Errors are returned, never printed by commands; Execute prints one line to
// stderr and maps the error to an exit code (see ExitError).
package cli
