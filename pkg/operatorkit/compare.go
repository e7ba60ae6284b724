package operatorkit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"

	"opctl.dev/opctl/pkg/pac"
)

// HashAnnotation holds the sha256 of the canonical JSON of the desired
// object last applied, so that a desired change is seen even when it only
// removes fields.
const HashAnnotation = "operatorkit.opctl.dev/desired-hash"

// desiredHash returns the sha256 over the canonical JSON (sorted keys) of
// obj without its hash annotation.
func desiredHash(obj map[string]any) (string, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return "", fmt.Errorf("hashing desired object: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// normalize round-trips v through JSON so numbers compare as float64 and
// typed values as plain maps, and drops nulls and empty maps and lists,
// which an apply does not set.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return prune(out), nil
}

func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = prune(e)
			if isEmpty(e) {
				delete(t, k)
				continue
			}
			t[k] = e
		}
		return t
	case []any:
		for i := range t {
			t[i] = prune(t[i])
		}
		return t
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

// subset reports whether every field set in desired has the same value in
// live. Fields only in live (server defaults, other managers) are ignored.
// Lists of objects with a "name" (or "uid") key match items by that key, as
// server-side apply merges them; other lists must be equal.
func subset(desired, live any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, dv := range d {
			lv, ok := l[k]
			if !ok || !subset(dv, lv) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return false
		}
		if key := listKey(d); key != "" {
			return keyedSubset(d, l, key)
		}
		if len(d) != len(l) {
			return false
		}
		for i := range d {
			if !subset(d[i], l[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(desired, live) || sameQuantity(desired, live)
	}
}

// sameQuantity reports whether desired, a number or a string, and live, a
// string, are the same resource quantity written two ways: the API server
// keeps quantities canonical ("cpu: 1" comes back "1", "0.1" as "100m").
func sameQuantity(desired, live any) bool {
	l, ok := live.(string)
	if !ok {
		return false
	}
	var d string
	switch v := desired.(type) {
	case string:
		d = v
	case float64:
		d = strconv.FormatFloat(v, 'f', -1, 64)
	case int64:
		d = strconv.FormatInt(v, 10)
	default:
		return false
	}
	// Text from anyone who can write the object: bounded before parsing.
	if pac.BoundedQuantity(d) != nil || pac.BoundedQuantity(l) != nil {
		return false
	}
	dq, err := resource.ParseQuantity(d)
	if err != nil {
		return false
	}
	lq, err := resource.ParseQuantity(l)
	return err == nil && dq.Cmp(lq) == 0
}

// listKey returns the key that identifies every item of items, if any.
func listKey(items []any) string {
	for _, key := range []string{"name", "uid"} {
		all := true
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return ""
			}
			if _, ok := m[key]; !ok {
				all = false
				break
			}
		}
		if all {
			return key
		}
	}
	return ""
}

func keyedSubset(desired, live []any, key string) bool {
	byKey := make(map[any]any, len(live))
	for _, it := range live {
		if m, ok := it.(map[string]any); ok {
			byKey[m[key]] = it
		}
	}
	for _, it := range desired {
		lv, ok := byKey[it.(map[string]any)[key]]
		if !ok || !subset(it, lv) {
			return false
		}
	}
	return true
}

// Drifted reports whether live lacks a field that desired sets or holds
// another value for it: what a server-side apply of desired would change.
// apiVersion and kind are not compared.
func Drifted(desired map[string]any, live any) (bool, error) {
	d := make(map[string]any, len(desired))
	for k, v := range desired {
		if k != "apiVersion" && k != "kind" {
			d[k] = v
		}
	}
	dn, err := normalize(d)
	if err != nil {
		return false, err
	}
	ln, err := normalize(live)
	if err != nil {
		return false, err
	}
	return !subset(dn, ln), nil
}
