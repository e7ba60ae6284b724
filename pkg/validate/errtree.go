package validate

import (
	"slices"
	"strings"
)

// treeNode is one line of an operator-registry error tree and its children.
type treeNode struct {
	text string
	kids []*treeNode
}

// canonicalTree re-renders the error tree operator-registry prints (lines
// prefixed "├── ", "└── ", "│   ", "    " per level) with every level's
// entries sorted: operator-registry builds it from map iteration, and a
// report must not change between two runs on the same catalog. Text that
// is not such a tree comes back unchanged.
func canonicalTree(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	root := &treeNode{text: lines[0]}
	stack := []*treeNode{root}
	for _, line := range lines[1:] {
		depth, text := treeDepth(line)
		if depth == 0 || depth > len(stack) { // a continuation line
			last := stack[len(stack)-1]
			last.text += "\n" + line
			continue
		}
		n := &treeNode{text: text}
		parent := stack[depth-1]
		parent.kids = append(parent.kids, n)
		stack = append(stack[:depth], n)
	}
	return strings.TrimRight(root.sortKids(), "\n")
}

// treeDepth counts the 4-rune prefix groups of line, ending in a branch.
func treeDepth(line string) (int, string) {
	r := []rune(line)
	depth := 0
	for len(r) >= 4 {
		switch string(r[:4]) {
		case "│   ", "    ":
			depth++
			r = r[4:]
			continue
		case "├── ", "└── ":
			return depth + 1, string(r[4:])
		}
		break
	}
	return 0, line
}

// sortKids orders every level by its entries' whole subtrees, bottom up,
// and returns n's subtree as text: the key its parent sorts by.
func (n *treeNode) sortKids() string {
	keys := map[*treeNode]string{}
	for _, k := range n.kids {
		keys[k] = k.sortKids()
	}
	slices.SortFunc(n.kids, func(x, y *treeNode) int { return strings.Compare(keys[x], keys[y]) })
	var b strings.Builder
	n.render(&b, "", "")
	return b.String()
}

func (n *treeNode) render(b *strings.Builder, prefix, childPrefix string) {
	b.WriteString(prefix + n.text + "\n")
	for i, k := range n.kids {
		if i == len(n.kids)-1 {
			k.render(b, childPrefix+"└── ", childPrefix+"    ")
		} else {
			k.render(b, childPrefix+"├── ", childPrefix+"│   ")
		}
	}
}
