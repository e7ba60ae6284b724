// Package config reads the watchenv fixture's settings from its
// environment, as cloudnative-pg and mariadb-operator do outside cmd/.
package config

import (
	"os"
	"strings"
)

// watchNamespaceEnv names the namespaces to watch, comma-separated.
const watchNamespaceEnv = "WATCH_NAMESPACE"

// Config is the operator's configuration.
type Config struct {
	// WatchNamespace is a comma-separated list; empty watches all.
	WatchNamespace string
}

// Load reads the configuration.
func Load() Config {
	return Config{WatchNamespace: os.Getenv(watchNamespaceEnv)}
}

// WatchedNamespaces lists the namespaces to watch; none means all.
func (c Config) WatchedNamespaces() []string {
	var out []string
	for _, ns := range strings.Split(c.WatchNamespace, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}
