package helmrelease

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// keepIgnored sets, in desired, every field an ignore rule for it names to
// its live value (or removes it where live has none): drift correction
// neither compares nor restores those fields, and a restoring apply
// leaves them as they are.
func keepIgnored(desired, live *unstructured.Unstructured, rules []tenancyv1.DriftIgnoreRule) {
	for _, r := range rules {
		if t := r.Target; t != nil && (t.Kind != "" && t.Kind != desired.GetKind() || t.Name != "" && t.Name != desired.GetName()) {
			continue
		}
		for _, p := range r.Paths {
			tokens := pointerTokens(p)
			if len(tokens) == 0 {
				continue
			}
			if v, ok := pointerGet(live.Object, tokens); ok {
				pointerSet(desired.Object, tokens, v)
			} else {
				pointerDelete(desired.Object, tokens)
			}
		}
	}
}

// pointerTokens splits a JSON pointer (RFC 6901) into its reference
// tokens, unescaped; nil for the whole document or a malformed pointer.
func pointerTokens(p string) []string {
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens
}

// step is the value under token in v: a map's key or a list's index.
func step(v any, token string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		e, ok := c[token]
		return e, ok
	case []any:
		i, err := strconv.Atoi(token)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

func pointerGet(doc map[string]any, tokens []string) (any, bool) {
	var v any = doc
	for _, t := range tokens {
		var ok bool
		if v, ok = step(v, t); !ok {
			return nil, false
		}
	}
	return v, true
}

// pointerSet sets the value at tokens, making the maps on the way; a
// list on the way must hold the index.
func pointerSet(doc map[string]any, tokens []string, value any) {
	var v any = doc
	for i, t := range tokens {
		last := i == len(tokens)-1
		switch c := v.(type) {
		case map[string]any:
			if last {
				c[t] = value
				return
			}
			next, ok := c[t]
			if !ok {
				next = map[string]any{}
				c[t] = next
			}
			v = next
		case []any:
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(c) {
				return
			}
			if last {
				c[n] = value
				return
			}
			v = c[n]
		default:
			return
		}
	}
}

// pointerDelete removes the value at tokens from a map; a list element
// is left (removing it would shift the others).
func pointerDelete(doc map[string]any, tokens []string) {
	parent, ok := pointerGet(doc, tokens[:len(tokens)-1])
	if m, isMap := parent.(map[string]any); ok && isMap {
		delete(m, tokens[len(tokens)-1])
	}
}
