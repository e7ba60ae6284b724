package packaging

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// WatchNamespace is what opctl package found, by parsing the manager's Go
// code, of the manager reading which namespaces to watch. The install
// modes, the chart's watch settings and the tenancy controller's
// admission of the operator follow from it.
type WatchNamespace struct {
	// Main is the manager's main package, relative to the project, and
	// How says how it was found; both "" when no code was found.
	Main string `json:"main,omitempty"`
	How  string `json:"how,omitempty"`
	// Packages and Files are what was parsed: the main package and the
	// packages of the module it imports, transitively.
	Packages int `json:"packages"`
	Files    int `json:"files"`
	// Settings are what the manager reads its namespaces from: env
	// variables, flags, and controller-runtime cache options fed from
	// them. None means it watches every namespace.
	Settings []WatchSetting `json:"settings,omitempty"`
	// List says the setting is split on commas, so it takes several
	// namespaces (MultiNamespace).
	List bool `json:"list,omitempty"`
	// Cache is where the manager sets its cache's namespaces with no
	// setting found that feeds it ("" otherwise).
	Cache string `json:"cache,omitempty"`
	// Webhooks are the env variables read that switch the manager's
	// webhook server on or off (ENABLE_WEBHOOKS), found by the same parse.
	Webhooks []WatchSetting `json:"webhooks,omitempty"`
	// Truncated says the bounds stopped the walk before its end.
	Truncated bool `json:"truncated,omitempty"`
}

// WatchSetting is one setting the manager reads its namespaces from.
type WatchSetting struct {
	// Kind is env, flag or cache; Name the variable (WATCH_NAMESPACE), the
	// flag (--namespace) or the cache option (DefaultNamespaces).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Where is file:line, relative to the project.
	Where string `json:"where"`
}

// Known reports whether opctl found the manager's code at all.
func (w WatchNamespace) Known() bool { return w.How != "" }

// Reads reports whether the manager reads a watch-namespace setting.
func (w WatchNamespace) Reads() bool { return len(w.Settings) > 0 }

// Annotation is the value of contract.WatchNamespace.
func (w WatchNamespace) Annotation() string {
	switch {
	case !w.Known():
		return contract.WatchUnknown
	case !w.Reads():
		return contract.WatchNone
	}
	var out []string
	for _, s := range w.Settings {
		if v := s.Kind + ":" + s.Name; !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return strings.Join(out, ",")
}

// envs are the env variables of the settings.
func (w WatchNamespace) envs() []string {
	var out []string
	for _, s := range w.Settings {
		if s.Kind == "env" && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// flags are the flags of the settings, with their dashes.
func (w WatchNamespace) flags() []string {
	var out []string
	for _, s := range w.Settings {
		if s.Kind == "flag" && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Bounds of the walk: opctl package parses code on every run, so a huge
// module must not cost more than the kustomize build.
const (
	maxGoFileBytes  = 512 << 10
	maxWalkFiles    = 3000
	maxWalkBytes    = 48 << 20
	maxWalkPackages = 600
)

// lookedFor says, in warnings, what detection looks for.
const lookedFor = "env variables like WATCH_NAMESPACE, flags like --namespace or --watch-namespace, and controller-runtime cache options (cache.Options DefaultNamespaces, Options.Namespace, MultiNamespacedCacheBuilder) fed from them"

// detectWatchNamespace parses the manager's main package and the packages
// of its module it imports, transitively (go/parser only: nothing is
// built or type-checked; tests, testdata and vendor are never read, and
// files over maxGoFileBytes are skipped). A file is parsed whole only when
// its bytes mention what detection looks for; the others only up to their
// imports.
func (p *Project) detectWatchNamespace(df *dockerfile) WatchNamespace {
	if l := p.inputs.layout(); strings.HasPrefix(l, "helm.sdk.operatorframework.io/") || strings.HasPrefix(l, "ansible.sdk.operatorframework.io/") {
		// operator-sdk's helm-operator and ansible-operator read it.
		return WatchNamespace{How: "PROJECT layout " + l, Settings: []WatchSetting{{Kind: "env", Name: "WATCH_NAMESPACE", Where: "PROJECT"}}}
	}
	mod := findModule(p.Dir)
	main, how := p.mainPackage(df, mod)
	if main == "" {
		return WatchNamespace{}
	}
	w := WatchNamespace{Main: main, How: how}
	root, err := filepath.Abs(p.Dir)
	if err != nil {
		return WatchNamespace{}
	}
	s := newWatchScan(root, mod.dirOf)
	type pkg struct{ dir, path string }
	start := filepath.Join(root, filepath.FromSlash(main))
	queue := []pkg{{dir: start}}
	seen := map[string]bool{start: true}
	var bytesRead int64
	for len(queue) > 0 {
		if w.Packages >= maxWalkPackages {
			w.Truncated = true
			break
		}
		pk := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(pk.dir)
		if err != nil {
			continue
		}
		w.Packages++
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			if w.Files >= maxWalkFiles || bytesRead >= maxWalkBytes {
				w.Truncated = true
				break
			}
			file := filepath.Join(pk.dir, name)
			src, err := readBounded(file, maxGoFileBytes)
			if err != nil || ignoredByBuild(src) {
				continue
			}
			w.Files++
			bytesRead += int64(len(src))
			for _, imp := range s.file(file, src) {
				d, ok := mod.dirOf(imp)
				if !ok || seen[d] || skippedImport(imp) {
					continue
				}
				seen[d] = true
				queue = append(queue, pkg{dir: d, path: imp})
			}
		}
	}
	w.Settings, w.List, w.Cache = s.result()
	w.Webhooks = s.webhookEnvs()
	return w
}

// skippedImport reports an import path the go command never builds from
// the module's tree: under vendor/ or testdata/.
func skippedImport(imp string) bool {
	for _, e := range strings.Split(imp, "/") {
		if e == "vendor" || e == "testdata" {
			return true
		}
	}
	return false
}

// readBounded reads a regular file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, max)
	}
	b := make([]byte, fi.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}

// ignoredByBuild reports a file that a go:build constraint leaves out of
// every build ("ignore", as tools and generators use).
func ignoredByBuild(src []byte) bool {
	i := bytes.Index(src, []byte("//go:build "))
	if i < 0 || i > 2048 {
		return false
	}
	line, _, _ := bytes.Cut(src[i+len("//go:build "):], []byte("\n"))
	return strings.TrimSpace(string(line)) == "ignore"
}

// triggers are the byte strings that make a file worth a full parse: the
// names of settings and the cache options. Each holds "amespace" or
// "AMESPACE", which most files lack.
var triggers = [][]byte{
	[]byte("NAMESPACE"), []byte("DefaultNamespaces"), []byte("MultiNamespacedCacheBuilder"),
	[]byte("GetWatchNamespace"), []byte("Namespaces:"),
}

// wantsFullParse reports whether a file may hold evidence.
func wantsFullParse(src []byte) bool {
	if bytes.Contains(src, []byte("_WEBHOOK")) || bytes.Contains(src, []byte("ebhook")) && (bytes.Contains(src, []byte("Getenv")) || bytes.Contains(src, []byte("LookupEnv"))) {
		return true // ENABLE_WEBHOOKS, or a read of it
	}
	lower, upper := bytes.Contains(src, []byte("amespace")), bytes.Contains(src, []byte("AMESPACE"))
	if !lower && !upper {
		return false
	}
	for _, t := range triggers {
		if bytes.Contains(src, t) {
			return true
		}
	}
	has := func(s string) bool { return bytes.Contains(src, []byte(s)) }
	// A flag named like a namespace; controller-runtime's Options.Namespace
	// before v0.16; a helper splitting a list of namespaces.
	return (has(`amespace"`) || has(`amespaces"`)) && has("lag") ||
		has("Namespace:") && (has("NewManager") || has("ctrl.Options") || has("manager.Options")) ||
		has("amespaces") && has("strings.Split")
}

// file parses one file, scans it when it may hold evidence, and returns
// its imports.
func (s *watchScan) file(path string, src []byte) []string {
	mode := parser.ImportsOnly | parser.SkipObjectResolution
	full := wantsFullParse(src)
	if full {
		mode = parser.SkipObjectResolution
	}
	f, _ := parser.ParseFile(s.fset, path, src, mode)
	if f == nil {
		return nil
	}
	var imports []string
	for _, is := range f.Imports {
		if v, err := strconv.Unquote(is.Path.Value); err == nil {
			imports = append(imports, v)
		}
	}
	if full {
		s.path = path
		s.scan(f)
	}
	return imports
}

// where is file:line relative to the project.
func (s *watchScan) where(pos token.Pos) string {
	ps := s.fset.Position(pos)
	rel, err := filepath.Rel(s.dir, ps.Filename)
	if err != nil {
		rel = ps.Filename
	}
	return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), ps.Line)
}

// watchEnvNames are the env variables the chart and the CSV set to the
// namespaces to watch: those the manager reads named like a watch
// namespace (WATCH_NAMESPACE); else, unless it reads such a flag, the
// other env variables found feeding its cache (OPERATOR_SCOPE_NAMESPACE);
// else, unless it reads a flag or nothing at all, WATCH_NAMESPACE.
func (p *Project) watchEnvNames() []string {
	if p.allNamespacesOnly() {
		return nil
	}
	var named, others []string
	for _, e := range p.Watch.envs() {
		if watchEnv().MatchString(e) {
			named = append(named, e)
		} else {
			others = append(others, e)
		}
	}
	flags := p.Watch.flags()
	switch {
	case len(named) > 0:
		return named
	case slices.ContainsFunc(flags, func(f string) bool { return watchFlag().MatchString(strings.TrimLeft(f, "-")) }):
		return nil
	case len(others) > 0:
		return others
	case !p.Watch.Reads() || len(flags) == 0:
		return []string{"WATCH_NAMESPACE"}
	}
	return nil
}

// watchFlagName is the flag (--namespace) the chart and the CSV pass the
// namespaces to watch with, when the manager reads them from a flag and
// no env variable; "" otherwise.
func (p *Project) watchFlagName() string {
	if p.allNamespacesOnly() || len(p.watchEnvNames()) > 0 {
		return ""
	}
	if f := p.Watch.flags(); len(f) > 0 {
		return f[0]
	}
	return ""
}

// webhookEnvNames are the env variables that switch the manager's webhook
// server, which the chart sets from webhooks.enabled.
func (p *Project) webhookEnvNames() []string {
	var out []string
	for _, s := range p.Watch.Webhooks {
		if !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}
