package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// project is one line of the corpus list.
type project struct {
	// Repo is owner/name on GitHub; Commit the pinned commit; Subdir the
	// directory holding config/ ("." for the root).
	Repo, Commit, Subdir string
	// Classes are what the project was chosen for.
	Classes []string
	// Overlay is the kustomize directory relative to Subdir.
	Overlay string
}

// ID names the project in the table: the repository, and the subdirectory
// when it is not the root.
func (p project) ID() string {
	if p.Subdir == "." {
		return p.Repo
	}
	return p.Repo + "//" + p.Subdir
}

func (p project) has(class string) bool {
	for _, c := range p.Classes {
		if c == class {
			return true
		}
	}
	return false
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// readList reads the corpus list: one project a line, "repo commit subdir
// classes [overlay=dir]", '#' starting a comment.
func readList(path string) ([]project, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []project
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 4 || len(fields) > 5 {
			return nil, fmt.Errorf("%s:%d: want \"repo commit subdir classes [overlay=dir]\", got %d fields", path, n, len(fields))
		}
		p := project{Repo: fields[0], Commit: fields[1], Subdir: filepath.Clean(fields[2]), Classes: strings.Split(fields[3], ","), Overlay: "config/default"}
		if strings.Count(p.Repo, "/") != 1 {
			return nil, fmt.Errorf("%s:%d: repository %q is not owner/name", path, n, p.Repo)
		}
		if !commitRE.MatchString(p.Commit) {
			return nil, fmt.Errorf("%s:%d: commit %q is not 40 hex digits", path, n, p.Commit)
		}
		if len(fields) == 5 {
			v, ok := strings.CutPrefix(fields[4], "overlay=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: fifth field %q: want overlay=dir", path, n, fields[4])
			}
			p.Overlay = v
		}
		out = append(out, p)
	}
	return out, sc.Err()
}
