// Package cli holds opctl's cobra commands, one file per command. Commands
// are thin: they turn flags into calls on the pkg/ libraries and print the
// result in the format asked for with -o (GlobalOptions).
//
// Where a library has an extension point, the command takes its flags from
// the library's registry: package adds every packaging target's own flags
// and a --<target>-only flag per target, so a new target needs no change
// here.
//
// Errors are returned, never printed by commands; Execute prints one line
// to stderr and maps the error to an exit code (see ExitError): validate,
// for one, exits 1 on findings at or above --fail-on and 2 on unusable
// input.
package cli
