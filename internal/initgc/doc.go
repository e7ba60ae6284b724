// Package initgc turns the garbage collector off while most of the
// packages linked into opctl initialise, and Restore turns it back on.
//
// opctl links Kubernetes, Helm, controller-runtime and controller-tools,
// whose package initialisers allocate about 17 MB (schemes, metrics,
// meta-schemas, inflection tables) that stays live; from the runtime's
// 4 MB starting goal that ran five or six collections before main, a third
// of the CPU of `opctl --help`. Go initialises a package as soon as its
// imports are and no package sorted before it by import path is ready, so
// this one, which imports only runtime/debug, runs once that has: after
// a part of the initialisers, before the rest. main calls Restore first,
// which brings back the setting the runtime read from GOGC, so every
// command runs with the usual collector.
package initgc
