package packaging

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// overlayObject is one object of the kustomize build, as the API machinery
// holds it. It is decoded from krusty's node tree directly, integral
// numbers as int64 and others as float64 as a JSON decoding gives them.
// The round trip it replaces (the node encoded to YAML, decoded, encoded to
// JSON and decoded again) also changed values: a folded scalar's line
// before a more-indented line gained a blank line, which the YAML
// specification does not give. Anything JSON would treat otherwise (a
// non-string key, a non-finite number, a time, binary data, no kind)
// takes that round trip.
func overlayObject(rn *kyaml.RNode) (*unstructured.Unstructured, error) {
	if m, err := rn.Map(); err == nil {
		if v, ok := jsonValue(m); ok {
			u := &unstructured.Unstructured{Object: v.(map[string]any)}
			if u.GetKind() != "" {
				return u, nil
			}
		}
	}
	j, err := rn.MarshalJSON()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		return nil, err
	}
	return u, nil
}

// jsonValue is v as encoding it to JSON and decoding it as the API
// machinery does would make it, and true; false where that is not plain.
func jsonValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		// encoding/json writes an integral float below 1e21 without a
		// fraction or exponent, which decodes as int64 where it fits.
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		if x == math.Trunc(x) && math.Abs(x) < 1e21 && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x), true
		}
		return x, true
	case map[string]any:
		for k, e := range x {
			c, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			x[k] = c
		}
		return x, true
	case []any:
		for i, e := range x {
			c, ok := jsonValue(e)
			if !ok {
				return nil, false
			}
			x[i] = c
		}
		return x, true
	}
	return nil, false
}
