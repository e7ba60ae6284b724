package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// managedDirectives are set by the operator and refused in spec.config.
var managedDirectives = []string{"port", "dir", "requirepass", "include", "bind", "protected-mode"}

// checkConfig refuses directives the operator manages and values that
// would break the file.
func checkConfig(cfg map[string]string) error {
	for k, v := range cfg {
		key := strings.ToLower(strings.TrimSpace(k))
		if slices.Contains(managedDirectives, key) {
			return fmt.Errorf("spec.config.%s is managed by the operator; remove it", k)
		}
		if key == "" || strings.ContainsAny(k, " \t\n") || strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("spec.config.%s: directive names must be one word and values one line", k)
		}
	}
	return nil
}

// renderConfig renders valkey.conf: the managed directives, then spec.config
// in key order, so the same spec gives the same bytes.
func renderConfig(k *kvv1.KVStore) string {
	var b strings.Builder
	b.WriteString("# Managed by the kvstore operator; edit spec.config of the KVStore instead.\n")
	fmt.Fprintf(&b, "port %d\ndir /data\nbind * -::*\nprotected-mode no\nappendonly yes\n", valkeyPort)
	keys := make([]string, 0, len(k.Spec.Config))
	for key := range k.Spec.Config {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		fmt.Fprintf(&b, "%s %s\n", key, k.Spec.Config[key])
	}
	return b.String()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
