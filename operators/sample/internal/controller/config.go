package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

// renderConfig renders valkey.conf: the managed directives, the tuned
// ones, then the config in key order, so the same spec gives the same
// bytes. The config is spec.config, or the last good one while a failed
// spec.config is rolled back.
func renderConfig(k *kvv1.KVStore) string {
	cfg := configOf(k)
	var b strings.Builder
	b.WriteString("# Managed by the kvstore operator; edit spec.config of the KVStore instead.\n")
	fmt.Fprintf(&b, "port %d\ndir /data\nbind * -::*\nprotected-mode no\nappendonly yes\n", valkeyPort)
	for _, d := range tuned(k, cfg) {
		fmt.Fprintf(&b, "%s %s\n", d[0], d[1])
	}
	keys := make([]string, 0, len(cfg))
	for key := range cfg {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		fmt.Fprintf(&b, "%s %s\n", key, cfg[key])
	}
	return b.String()
}

// MaxMemoryPercentDefault is the share of the container's memory limit
// that becomes maxmemory when spec.tuning.maxMemoryPercent is not set: the
// rest covers the copy-on-write of a snapshot or full sync and the
// replication buffers.
const MaxMemoryPercentDefault = 75

// tuned are the directives derived from the pod and spec.mode that cfg,
// the user's explicit config, does not set: maxmemory from the memory
// limit, and maxmemory-policy from the mode.
func tuned(k *kvv1.KVStore, cfg map[string]string) [][2]string {
	var out [][2]string
	set := func(name string) bool {
		for key := range cfg {
			if strings.EqualFold(strings.TrimSpace(key), name) {
				return true
			}
		}
		return false
	}
	pct := int64(ptr.Deref(k.Spec.Tuning.MaxMemoryPercent, MaxMemoryPercentDefault))
	if limit, ok := resourcesOf(k).Limits[corev1.ResourceMemory]; ok && pct > 0 && !set("maxmemory") {
		out = append(out, [2]string{"maxmemory", fmt.Sprint(limit.Value() * pct / 100)})
	}
	if !set("maxmemory-policy") {
		policy := "noeviction"
		if k.Spec.Mode == kvv1.ModeCache {
			policy = "allkeys-lru"
		}
		out = append(out, [2]string{"maxmemory-policy", policy})
	}
	return out
}

// configOf is the config to run: spec.config, unless it crash-looped the
// pods and was rolled back to the last good one.
func configOf(k *kvv1.KVStore) map[string]string {
	if c := k.Status.Config; c != nil && c.FailedSHA256 != "" && c.FailedSHA256 == configSum(k.Spec.Config) {
		return c.Good
	}
	return k.Spec.Config
}

// configSum is a checksum of a config, independent of map order.
func configSum(cfg map[string]string) string {
	keys := make([]string, 0, len(cfg))
	for key := range cfg {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, key := range keys {
		fmt.Fprintf(&b, "%s %s\n", key, cfg[key])
	}
	return sha(b.String())
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
