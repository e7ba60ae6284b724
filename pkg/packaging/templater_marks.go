package packaging

import "strings"

// The templater's marks are a kind (OPCTLTOKEN, OPCTLBLOCK, OPCTLLINE),
// digits and an X. They are found with strings.Index, not regular
// expressions: a CRD's text runs to megabytes and holds few marks.

// nextMark finds the first mark of kind in s at or after from: its start
// and end, or -1.
func nextMark(s, kind string, from int) (int, int) {
	for {
		i := strings.Index(s[from:], kind)
		if i < 0 {
			return -1, -1
		}
		start := from + i
		j := start + len(kind)
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > start+len(kind) && j < len(s) && s[j] == 'X' {
			return start, j + 1
		}
		from = start + len(kind)
	}
}

// replaceTokens replaces every mark of kind in s with expr of it.
func replaceTokens(s, kind string, expr func(tok string) string) string {
	start, end := nextMark(s, kind, 0)
	if start < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for start >= 0 {
		b.WriteString(s[last:start])
		b.WriteString(expr(s[start:end]))
		last = end
		start, end = nextMark(s, kind, end)
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceMarks replaces each line of s holding a mark of kind with what
// line returns for it, when it returns true; other lines stay.
func replaceMarks(s, kind string, line func(text, tok string) (string, bool)) string {
	start, end := nextMark(s, kind, 0)
	if start < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for start >= 0 {
		ls := strings.LastIndexByte(s[:start], '\n') + 1
		le := strings.IndexByte(s[end:], '\n')
		if le < 0 {
			le = len(s)
		} else {
			le += end
		}
		if ls >= last {
			if repl, ok := line(s[ls:le], s[start:end]); ok {
				b.WriteString(s[last:ls])
				b.WriteString(repl)
				last = le
			}
		}
		start, end = nextMark(s, kind, end)
	}
	b.WriteString(s[last:])
	return b.String()
}

// markLine splits a line "<spaces>[- ]<rest>" that holds tok: its
// indentation, its dash and what key of the rest returns.
func markLine(text, tok string, key func(rest string) (string, bool)) (indent, dash, k string, ok bool) {
	rest := strings.TrimLeft(text, " ")
	indent = text[:len(text)-len(rest)]
	if r, found := strings.CutPrefix(rest, "- "); found {
		dash, rest = "- ", r
	}
	k, ok = key(rest)
	return indent, dash, k, ok
}

// isKey reports whether k is a plain map key: letters, digits, _ . and -.
func isKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}
