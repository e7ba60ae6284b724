// Package initgc turns the garbage collector off while the packages linked
// into opctl initialise, and Restore turns it back on.
//
// opctl links Kubernetes, Helm, controller-runtime and controller-tools, whose
// package initialisers allocate about 17 MB (schemes, metrics, meta-schemas,
// inflection tables) that stays live. With the runtime's 4 MB starting goal
// that ran five or six collections before main, about a third of the CPU
// time of `opctl --help`. Importing this package from main switches the
// collector off before those initialisers run: the package imports nothing
// but unsafe, so Go's initialisation order (import-path order among the
// packages whose imports are ready) runs it among the first. main has
// Restore called once a command is about to run (cli.Execute's onRun),
// which brings back the setting the runtime read from GOGC, so every command
// runs with the usual collector; printing help or a usage error, which
// allocates little, runs without one (the first collection after Restore
// was about a tenth of the CPU of opctl --help).
package initgc
