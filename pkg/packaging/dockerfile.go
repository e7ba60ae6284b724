package packaging

import (
	"bufio"
	"bytes"
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxDockerfileBytes bounds the Dockerfile opctl reads.
const maxDockerfileBytes = 1 << 20

// dockerfile is what opctl reads of a project's Dockerfile: the go build
// commands (to find the manager's main package) and the final stage's
// base image and USER (to know whether the manager runs as non-root).
type dockerfile struct {
	// Builds are the go build commands of every stage, in order.
	Builds []goBuild
	// From is the final stage's base image; User its last USER, with ARG
	// and ENV references expanded ("" when it sets none).
	From, User string
}

// goBuild is one go build command: its -o output and its first package
// argument ("" for the current directory).
type goBuild struct {
	Out, Pkg string
}

// goBuildValueFlags are go build's flags that take a value.
var goBuildValueFlags = map[string]bool{
	"-o": true, "-ldflags": true, "-gcflags": true, "-asmflags": true, "-gccgoflags": true, "-tags": true, "-mod": true,
	"-modfile": true, "-overlay": true, "-pkgdir": true, "-buildmode": true, "-compiler": true, "-installsuffix": true,
	"-toolexec": true, "-pgo": true, "-covermode": true, "-coverpkg": true, "-p": true, "-C": true,
}

var dockerRef = lazyre.New(`\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}?`)

// loadDockerfile reads dir/Dockerfile; nil without one or when it is too
// large to be a Dockerfile.
func loadDockerfile(dir string) *dockerfile {
	path := filepath.Join(dir, "Dockerfile")
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxDockerfileBytes {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseDockerfile(b)
}

// parseDockerfile reads the instructions it needs, with line
// continuations joined; anything else is ignored.
func parseDockerfile(b []byte) *dockerfile {
	d := &dockerfile{}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), maxDockerfileBytes)
	var line string
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") && line == "" {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			line += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		line += l
		d.instruction(line, vars)
		line = ""
	}
	if line != "" {
		d.instruction(line, vars)
	}
	return d
}

func (d *dockerfile) instruction(line string, vars map[string]string) {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToUpper(cmd) {
	case "FROM":
		f := strings.Fields(rest)
		for len(f) > 0 && strings.HasPrefix(f[0], "--") {
			f = f[1:]
		}
		if len(f) > 0 {
			d.From = f[0]
		}
		d.User = ""
	case "ARG", "ENV":
		for _, kv := range strings.Fields(rest) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				vars[k] = strings.Trim(v, `"'`)
			}
		}
		if f := strings.Fields(rest); strings.ToUpper(cmd) == "ENV" && len(f) == 2 && !strings.Contains(f[0], "=") {
			vars[f[0]] = strings.Trim(f[1], `"'`) // ENV key value
		}
	case "USER":
		d.User = dockerRef().ReplaceAllStringFunc(strings.TrimSpace(rest), func(ref string) string {
			return vars[dockerRef().FindStringSubmatch(ref)[1]]
		})
	case "RUN":
		d.Builds = append(d.Builds, goBuilds(rest)...)
	}
}

// goBuilds finds the go build commands of a RUN instruction.
func goBuilds(run string) []goBuild {
	var out []goBuild
	words := strings.Fields(strings.NewReplacer("&&", " && ", ";", " ; ", "||", " || ", "|", " | ", `["`, " ", `"]`, " ", `",`, " ").Replace(run))
	for i, w := range words {
		words[i] = strings.Trim(w, `"'`)
	}
	for i := 0; i+1 < len(words); i++ {
		if words[i] != "go" || words[i+1] != "build" {
			continue
		}
		b := goBuild{}
		pkgSet := false
		for j := i + 2; j < len(words); j++ {
			w := strings.Trim(words[j], `"'`)
			if w == "&&" || w == ";" || w == "||" || w == "|" {
				break
			}
			if strings.HasPrefix(w, "-") {
				name, val, hasVal := strings.Cut(w, "=")
				name = "-" + strings.TrimLeft(name, "-")
				if name == "-o" {
					if hasVal {
						b.Out = val
					} else if j+1 < len(words) {
						b.Out = strings.Trim(words[j+1], `"'`)
					}
				}
				if goBuildValueFlags[name] && !hasVal {
					j++
				}
				continue
			}
			if !pkgSet {
				b.Pkg, pkgSet = w, true
			}
		}
		out = append(out, b)
	}
	return out
}

// buildFor is the go build whose output is the program the manager runs
// (its command's base name), else the first; false without any.
func (d *dockerfile) buildFor(program string) (goBuild, bool) {
	if d == nil || len(d.Builds) == 0 {
		return goBuild{}, false
	}
	for _, b := range d.Builds {
		if program != "" && b.Out != "" && filepath.Base(b.Out) == program {
			return b, true
		}
	}
	return d.Builds[0], true
}

// distrolessNonroot is the uid of the nonroot user of distroless and
// Chainguard images.
const distrolessNonroot = 65532

// nonRootUser is the uid the final stage's USER runs as when it is known
// to be non-root: a numeric uid other than 0, or the nonroot user of a
// distroless or Chainguard image (named is then true: the kubelet cannot
// verify a name, so runAsNonRoot needs runAsUser beside it).
func (d *dockerfile) nonRootUser() (uid int64, named, ok bool) {
	if d == nil || d.User == "" {
		return 0, false, false
	}
	user, _, _ := strings.Cut(d.User, ":")
	if n, err := strconv.ParseInt(user, 10, 64); err == nil {
		return n, false, n > 0
	}
	if user == "nonroot" && (strings.Contains(d.From, "distroless") || strings.HasPrefix(d.From, "cgr.dev/chainguard/")) {
		return distrolessNonroot, true, true
	}
	return 0, true, false
}
