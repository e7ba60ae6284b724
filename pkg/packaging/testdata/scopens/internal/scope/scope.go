// Package scope reads which namespaces the scopens fixture's manager
// watches, as rabbitmq's cluster-operator does: OPERATOR_SCOPE_NAMESPACE,
// a comma-separated list, empty for all. OPERATOR_NAMESPACE is where the
// operator runs, for leader election only.
package scope

import (
	"os"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

const scopeEnv = "OPERATOR_SCOPE_NAMESPACE"

// Own is the namespace the operator runs in.
func Own() string { return os.Getenv("OPERATOR_NAMESPACE") }

// CacheOptions limits the cache to the namespaces in scope, if any.
func CacheOptions() cache.Options {
	scope := os.Getenv(scopeEnv)
	if scope == "" {
		return cache.Options{}
	}
	opts := cache.Options{DefaultNamespaces: map[string]cache.Config{}}
	for _, ns := range strings.Split(scope, ",") {
		opts.DefaultNamespaces[ns] = cache.Config{}
	}
	return opts
}
