// Package lazyre compiles a regular expression the first time it is used
// rather than while the program starts: Go runs every linked package's
// initialisers whatever the command, and opctl --help needs none of them.
package lazyre
