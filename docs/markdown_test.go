package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// root is the repository root, seen from this package's folder.
const root = ".."

// block is a fenced code block.
type block struct {
	file string // relative to root
	line int    // of the opening fence
	info string // the fence's info string ("sh", "yaml", "")
	text string // the lines between the fences
	// runnable is set when `<!-- runnable[: tags] -->` precedes the fence;
	// tags are its words after the colon.
	runnable bool
	tags     []string
}

// span is a piece of prose: inline code or a link target.
type span struct {
	file string
	line int
	text string
}

// doc is one Markdown file, split into what the tests check.
type doc struct {
	path   string // relative to root
	blocks []block
	code   []span // inline code spans
	links  []span // link targets
	// anchors are the GitHub slugs of the file's headings.
	anchors map[string]bool
}

var (
	fenceRE    = regexp.MustCompile("^\\s*(```+|~~~+)\\s*(.*)$")
	markerRE   = regexp.MustCompile(`^<!--\s*runnable(?::([^>]*))?\s*-->\s*$`)
	inlineRE   = regexp.MustCompile("`([^`]+)`")
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	slugDropRE = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// docFiles returns README.md and docs/*.md, relative to root.
func docFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	sort.Strings(out[1:])
	return out, nil
}

// loadDocs reads and parses every documentation file.
func loadDocs() ([]doc, error) {
	files, err := docFiles()
	if err != nil {
		return nil, err
	}
	var docs []doc
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		d, err := parse(f, string(b))
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// parse splits Markdown into fenced blocks and prose; prose keeps its line
// breaks (blocks become empty lines) so that spans know their lines.
func parse(path, text string) (doc, error) {
	d := doc{path: path, anchors: map[string]bool{}}
	lines := strings.Split(text, "\n")
	prose := make([]string, len(lines))
	var open *block
	var fence string
	var body []string
	lastProse := ""
	for i, l := range lines {
		if open != nil {
			if m := fenceRE.FindStringSubmatch(l); m != nil && m[2] == "" && m[1][0] == fence[0] && len(m[1]) >= len(fence) {
				open.text = strings.Join(body, "\n")
				d.blocks = append(d.blocks, *open)
				open, body, lastProse = nil, nil, ""
				continue
			}
			body = append(body, l)
			continue
		}
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			open = &block{file: path, line: i + 1, info: strings.TrimSpace(m[2])}
			fence = m[1]
			if mm := markerRE.FindStringSubmatch(lastProse); mm != nil {
				open.runnable = true
				open.tags = strings.FieldsFunc(mm[1], func(r rune) bool { return r == ',' || r == ' ' })
			}
			continue
		}
		prose[i] = l
		if strings.TrimSpace(l) != "" {
			lastProse = strings.TrimSpace(l)
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			d.anchors[slug(m[1])] = true
		}
	}
	if open != nil {
		return d, fmt.Errorf("%s:%d: code block never closed", path, open.line)
	}
	all := strings.Join(prose, "\n")
	lineAt := func(off int) int { return 1 + strings.Count(all[:off], "\n") }
	// Inline code first; links are looked for outside it.
	for _, m := range inlineRE.FindAllStringSubmatchIndex(all, -1) {
		d.code = append(d.code, span{file: path, line: lineAt(m[0]), text: strings.Join(strings.Fields(all[m[2]:m[3]]), " ")})
	}
	noCode := inlineRE.ReplaceAllStringFunc(all, func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, s)
	})
	for _, m := range linkRE.FindAllStringSubmatchIndex(noCode, -1) {
		d.links = append(d.links, span{file: path, line: lineAt(m[0]), text: noCode[m[2]:m[3]]})
	}
	return d, nil
}

// slug is GitHub's anchor for a heading: lower case, inline markup and
// punctuation dropped, spaces as hyphens.
func slug(heading string) string {
	s := strings.ToLower(strings.ReplaceAll(heading, "`", ""))
	s = slugDropRE.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}
