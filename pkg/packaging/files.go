package packaging

// Files is a generated tree: slash-separated relative path → content. Each
// target renders one, under its own output folder; Package merges them and
// WriteFiles writes the result.
type Files map[string][]byte

// sortedPaths lists files' paths in order.
func (f Files) sortedPaths() []string { return sortedKeys(f) }

// merge copies from's files into into.
func merge(into, from Files) {
	for k, v := range from {
		into[k] = v
	}
}
