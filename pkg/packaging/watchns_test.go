package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// goProject writes a Go module example.com/op with files (path → source)
// and returns a project whose manager runs /manager.
func goProject(t *testing.T, files map[string]string) *Project {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["go.mod"]; !ok {
		files["go.mod"] = "module example.com/op\n\ngo 1.24\n"
	}
	for name, src := range files {
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(name)), src)
	}
	d := &appsv1.Deployment{}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Command: []string{"/manager"}}}
	return &Project{Dir: dir, Manager: d}
}

const mainHead = "package main\n\nimport (\n"

func TestDetectWatchNamespace(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// want is the annotation; list whether MultiNamespace follows.
		want string
		list bool
	}{
		{"the go/v4 scaffold reads none", map[string]string{
			"cmd/main.go": mainHead + "\tctrl \"sigs.k8s.io/controller-runtime\"\n)\n\nfunc main() { _, _ = ctrl.NewManager(nil, ctrl.Options{LeaderElectionID: \"x\"}) }\n",
		}, "none", false},
		{"WATCH_NAMESPACE in a package outside cmd/, split on commas", map[string]string{
			"cmd/main.go":         mainHead + "\t\"example.com/op/internal/env\"\n)\n\nfunc main() { _ = env.Namespaces() }\n",
			"internal/env/env.go": "package env\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nconst key = \"WATCH_NAMESPACE\"\n\nfunc Namespaces() []string { return strings.Split(os.Getenv(key), \",\") }\n",
		}, "env:WATCH_NAMESPACE", true},
		{"a struct tag of an env loader", map[string]string{
			"main.go":              mainHead + "\t\"example.com/op/pkg/config\"\n)\n\nfunc main() { _ = config.Config{} }\n",
			"pkg/config/config.go": "package config\n\ntype Config struct {\n\tWatchNamespace string `json:\"watchNamespace\" env:\"WATCH_NAMESPACE\"`\n}\n",
		}, "env:WATCH_NAMESPACE", false},
		{"another watch variable", map[string]string{
			"cmd/main.go": mainHead + "\t\"os\"\n)\n\nfunc main() { _ = os.Getenv(\"KUBERAY_WATCH_NAMESPACE\") }\n",
		}, "env:KUBERAY_WATCH_NAMESPACE", false},
		{"a pflag list flag", map[string]string{
			"cmd/main.go": mainHead + "\t\"github.com/spf13/pflag\"\n)\n\nfunc main() { var ns []string; pflag.StringSliceVar(&ns, \"watch-namespaces\", nil, \"\") }\n",
		}, "flag:--watch-namespaces", true},
		{"--namespace into the cache", map[string]string{
			"cmd/main.go": mainHead + "\t\"flag\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nfunc main() {\n\tns := flag.String(\"namespace\", \"\", \"\")\n\t_ = cache.Options{DefaultNamespaces: map[string]cache.Config{*ns: {}}}\n}\n",
		}, "flag:--namespace,cache:DefaultNamespaces", false},
		{"controller-runtime before v0.16: Options.Namespace from POD_NAMESPACE", map[string]string{
			"main.go": mainHead + "\t\"os\"\n\n\tctrl \"sigs.k8s.io/controller-runtime\"\n)\n\nfunc main() { _, _ = ctrl.NewManager(nil, ctrl.Options{Namespace: os.Getenv(\"POD_NAMESPACE\")}) }\n",
		}, "env:POD_NAMESPACE,cache:Namespace", false},
		{"MultiNamespacedCacheBuilder from a list", map[string]string{
			"main.go": mainHead + "\t\"os\"\n\t\"strings\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nfunc main() { _ = cache.MultiNamespacedCacheBuilder(strings.Split(os.Getenv(\"OPERATOR_NAMESPACES\"), \",\")) }\n",
		}, "env:OPERATOR_NAMESPACES,cache:MultiNamespacedCacheBuilder", true},
		{"operator-sdk's k8sutil", map[string]string{
			"cmd/manager/main.go": mainHead + "\t\"github.com/operator-framework/operator-sdk/pkg/k8sutil\"\n)\n\nfunc main() { _, _ = k8sutil.GetWatchNamespace() }\n",
		}, "env:WATCH_NAMESPACE", false},
		{"hard-coded cache namespaces are no setting", map[string]string{
			"cmd/main.go": mainHead + "\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nfunc main() { _ = cache.Options{DefaultNamespaces: map[string]cache.Config{\"ops\": {}}} }\n",
		}, "none", false},
		{"a namespace env with no cache is no setting", map[string]string{
			"cmd/main.go": mainHead + "\t\"os\"\n)\n\nfunc main() { _ = os.Getenv(\"POD_NAMESPACE\") }\n",
		}, "none", false},
		{"tests, ignored files and packages not imported are not read", map[string]string{
			"cmd/main.go":               mainHead + "\t\"example.com/op/internal/a\"\n)\n\nfunc main() { a.A() }\n",
			"cmd/main_test.go":          "package main\n\nconst x = \"WATCH_NAMESPACE\"\n",
			"cmd/tools.go":              "//go:build ignore\n\npackage main\n\nconst y = \"WATCH_NAMESPACE\"\n",
			"internal/a/a.go":           "package a\n\nfunc A() {}\n",
			"internal/b/b.go":           "package b\n\nconst z = \"WATCH_NAMESPACE\"\n",
			"vendor/example.com/v/v.go": "package v\n\nconst w = \"WATCH_NAMESPACE\"\n",
		}, "none", false},
		{"a module the go.mod replaces with a local directory", map[string]string{
			"go.mod":          "module example.com/op\n\ngo 1.24\n\nrequire example.com/shared v0.0.0\n\nreplace example.com/shared => ./shared // local\n",
			"cmd/main.go":     mainHead + "\t\"example.com/shared/ns\"\n)\n\nfunc main() { ns.Get() }\n",
			"shared/go.mod":   "module example.com/shared\n",
			"shared/ns/ns.go": "package ns\n\nimport \"os\"\n\nfunc Get() string { return os.Getenv(\"WATCH_NAMESPACE\") }\n",
		}, "env:WATCH_NAMESPACE", false},
		{"OPERATOR_SCOPE_NAMESPACE into the cache, OPERATOR_NAMESPACE only for leader election", map[string]string{
			"cmd/main.go": mainHead + "\t\"os\"\n\t\"strings\"\n\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\n" +
				"func main() {\n\town := os.Getenv(\"OPERATOR_NAMESPACE\")\n\tscope := os.Getenv(\"OPERATOR_SCOPE_NAMESPACE\")\n\topts := ctrl.Options{LeaderElectionNamespace: own}\n" +
				"\tif scope != \"\" {\n\t\topts.Cache.DefaultNamespaces = map[string]cache.Config{}\n\t\tfor _, ns := range strings.Split(scope, \",\") {\n\t\t\topts.Cache.DefaultNamespaces[ns] = cache.Config{}\n\t\t}\n\t}\n}\n",
		}, "env:OPERATOR_SCOPE_NAMESPACE,cache:DefaultNamespaces", true},
		{"OPERATOR_NAMESPACE through a struct tag and a helper's parameter into the cache", map[string]string{
			"cmd/main.go":          mainHead + "\t\"example.com/op/pkg/config\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nfunc main() { c := config.Load(); _ = opts(c.Own) }\n\nfunc opts(ns string) cache.Options {\n\treturn cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}\n}\n",
			"pkg/config/config.go": "package config\n\ntype Config struct {\n\tOwn string `env:\"OPERATOR_NAMESPACE\"`\n\tPod string `env:\"POD_NAMESPACE\"`\n}\n\nfunc Load() Config { return Config{} }\n",
		}, "env:OPERATOR_NAMESPACE,cache:DefaultNamespaces", false},
		{"a flag of another name into the cache", map[string]string{
			"cmd/main.go": mainHead + "\t\"flag\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nvar scope, leader string\n\nfunc main() {\n\tflag.StringVar(&scope, \"scope-namespace\", \"\", \"\")\n\tflag.StringVar(&leader, \"leader-namespace\", \"\", \"\")\n\t_ = cache.Options{DefaultNamespaces: map[string]cache.Config{scope: {}}}\n}\n",
		}, "flag:--scope-namespace,cache:DefaultNamespaces", false},
		{"a namespace env beside a cache it does not feed is no setting", map[string]string{
			"cmd/main.go": mainHead + "\t\"os\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/cache\"\n)\n\nfunc main() {\n\t_ = os.Getenv(\"POD_NAMESPACE\")\n\t_ = cache.Options{DefaultNamespaces: map[string]cache.Config{\"ops\": {}}}\n}\n",
		}, "none", false},
		{"no main package", map[string]string{
			"internal/env/env.go": "package env\n\nconst key = \"WATCH_NAMESPACE\"\n",
		}, "unknown", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := goProject(t, tt.files)
			w := p.detectWatchNamespace(loadDockerfile(p.Dir))
			if got := w.Annotation(); got != tt.want || w.List != tt.list {
				t.Errorf("annotation %q list %v, want %q and %v (%+v)", got, w.List, tt.want, tt.list, w)
			}
			for _, s := range w.Settings {
				if !strings.Contains(s.Where, ".go:") || filepath.IsAbs(s.Where) {
					t.Errorf("setting %+v: want where as a project-relative file:line", s)
				}
			}
		})
	}
}

// The parse finds the env variables that switch the webhook server,
// where the manager reads them.
func TestDetectWebhookEnv(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"kubebuilder's ENABLE_WEBHOOKS", map[string]string{
			"cmd/main.go": mainHead + "\t\"os\"\n)\n\nfunc main() {\n\tif os.Getenv(\"ENABLE_WEBHOOKS\") != \"false\" {\n\t}\n}\n",
		}, []string{"ENABLE_WEBHOOKS"}},
		{"a constant in another package", map[string]string{
			"cmd/main.go":         mainHead + "\t\"os\"\n\n\t\"example.com/op/internal/env\"\n)\n\nfunc main() { _, _ = os.LookupEnv(env.Webhooks) }\n",
			"internal/env/env.go": "package env\n\nconst Webhooks = \"DISABLE_WEBHOOKS\"\n",
		}, []string{"DISABLE_WEBHOOKS"}},
		{"named but never read", map[string]string{
			"cmd/main.go": mainHead + "\t\"fmt\"\n)\n\nfunc main() { fmt.Println(\"ENABLE_WEBHOOKS\") }\n",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := goProject(t, tt.files)
			w := p.detectWatchNamespace(loadDockerfile(p.Dir))
			var got []string
			for _, s := range w.Webhooks {
				got = append(got, s.Name)
				if !strings.Contains(s.Where, ".go:") {
					t.Errorf("%+v: want where as file:line", s)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("webhook envs %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMainPackage(t *testing.T) {
	const pkgMain = "package main\n\nfunc main() {}\n"
	tests := []struct {
		name  string
		files map[string]string
		main  string
		want  string
	}{
		{"opctl.yaml wins", map[string]string{"cmd/main.go": pkgMain, "cmd/operator/main.go": pkgMain}, "cmd/operator/main.go", "cmd/operator"},
		{"the Dockerfile's build of /manager", map[string]string{"cmd/main.go": pkgMain, "cmd/controller/main.go": pkgMain,
			"Dockerfile": "FROM golang AS b\nRUN go build -o webhook ./cmd/webhook && \\\n    go build -ldflags \"-s -w\" -o manager ./cmd/controller\nFROM scratch\n"}, "", "cmd/controller"},
		{"the Dockerfile by import path", map[string]string{"cmd/controller/main.go": pkgMain,
			"Dockerfile": "FROM golang\nRUN [\"go\", \"build\", \"-o\", \"manager\", \"example.com/op/cmd/controller\"]\n"}, "", "cmd/controller"},
		{"the Dockerfile's build of a file glob", map[string]string{"cmd/main.go": pkgMain, "cmd/controller/main.go": pkgMain, "cmd/controller/flags.go": "package main\n",
			"Dockerfile": "FROM golang AS b\nRUN go build -o mariadb-operator cmd/controller/*.go\nFROM scratch\n"}, "", "cmd/controller"},
		{"a Dockerfile target that does not exist falls through", map[string]string{"main.go": pkgMain,
			"Dockerfile": "FROM golang\nRUN go build -o manager ./cmd/gone\n"}, "", "."},
		{"kubebuilder go/v4", map[string]string{"cmd/main.go": pkgMain, "main.go": pkgMain}, "", "cmd"},
		{"kubebuilder go/v3", map[string]string{"main.go": pkgMain}, "", "."},
		{"operator-sdk v0", map[string]string{"cmd/manager/main.go": pkgMain}, "", "cmd/manager"},
		{"none", map[string]string{"cmd/tool/main.go": pkgMain}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := goProject(t, tt.files)
			p.Config.Main = tt.main
			if got, _ := p.mainPackage(loadDockerfile(p.Dir), findModule(p.Dir)); got != tt.want {
				t.Errorf("main package %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDockerfile(t *testing.T) {
	tests := []struct {
		name, text     string
		builds         []goBuild
		user           string
		uid            int64
		named, nonRoot bool
	}{
		{"kubebuilder go/v4", "FROM golang:1.24 AS builder\nARG TARGETOS\nRUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} go build -a -o manager cmd/main.go\n\nFROM gcr.io/distroless/static:nonroot\nUSER 65532:65532\nENTRYPOINT [\"/manager\"]\n",
			[]goBuild{{Out: "manager", Pkg: "cmd/main.go"}}, "65532:65532", 65532, false, true},
		{"ARG and ENV in USER", "FROM golang AS b\nRUN go build -o /out/manager .\nFROM ubi9\nENV USER_UID=1001\nUSER ${USER_UID}\n",
			[]goBuild{{Out: "/out/manager", Pkg: "."}}, "1001", 1001, false, true},
		{"root", "FROM alpine\nUSER root\n", nil, "root", 0, true, false},
		{"uid 0", "FROM alpine\nUSER 0:0\n", nil, "0:0", 0, false, false},
		{"distroless nonroot by name", "FROM gcr.io/distroless/static:nonroot\nUSER nonroot:nonroot\n", nil, "nonroot:nonroot", 65532, true, true},
		{"a named user elsewhere cannot be verified", "FROM alpine\nUSER app\n", nil, "app", 0, true, false},
		{"USER of an earlier stage only", "FROM golang AS b\nUSER 1000\nRUN go build -mod=vendor -o=bin/manager ./cmd/manager\nFROM scratch\n",
			[]goBuild{{Out: "bin/manager", Pkg: "./cmd/manager"}}, "", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := parseDockerfile([]byte(tt.text))
			if !slices.Equal(d.Builds, tt.builds) || d.User != tt.user {
				t.Errorf("builds %+v user %q, want %+v and %q", d.Builds, d.User, tt.builds, tt.user)
			}
			if uid, named, ok := d.nonRootUser(); ok != tt.nonRoot || (ok && (uid != tt.uid || named != tt.named)) {
				t.Errorf("nonRootUser %d %v %v, want %d %v %v", uid, named, ok, tt.uid, tt.named, tt.nonRoot)
			}
		})
	}
}

// The fixtures' managers: none read (the go/v4 scaffold), WATCH_NAMESPACE
// read outside cmd/, a --namespace flag into the cache. The chart and the
// CSV pass the namespaces the way each manager reads them.
func TestWatchNamespaceFixtures(t *testing.T) {
	tests := []struct {
		fixture, annotation, modes, scope string
		// env and flag are how the chart passes the namespaces.
		env, flag string
	}{
		{"allns", "none", "AllNamespaces", "cluster", "", ""},
		{"watchenv", "env:WATCH_NAMESPACE,cache:DefaultNamespaces", "OwnNamespace,SingleNamespace,MultiNamespace,AllNamespaces", "namespace", "WATCH_NAMESPACE", ""},
		{"nsflag", "flag:--namespace,cache:DefaultNamespaces", "OwnNamespace,SingleNamespace,AllNamespaces", "namespace", "", "--namespace"},
		{"sdk", "none", "AllNamespaces", "cluster", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			out, chart := packageChart(t, tt.fixture)
			meta := string(readFile(t, filepath.Join(chart, "Chart.yaml")))
			for _, want := range []string{"opctl.dev/watch-namespace: " + tt.annotation, "opctl.dev/install-modes: " + tt.modes} {
				if !strings.Contains(meta, want) {
					t.Errorf("Chart.yaml lacks %q:\n%s", want, meta)
				}
			}
			if values := string(readFile(t, filepath.Join(chart, "values.yaml"))); !strings.Contains(values, "  scope: "+tt.scope+"\n") {
				t.Errorf("values.yaml: want rbac.scope %s", tt.scope)
			}
			deploy := string(readFile(t, filepath.Join(chart, "templates", "deployment.yaml")))
			if got := strings.Contains(deploy, "name: WATCH_NAMESPACE"); got != (tt.env != "") {
				t.Errorf("deployment sets WATCH_NAMESPACE: %v, want %v", got, tt.env != "")
			}
			if got := strings.Contains(deploy, `printf "--namespace=%s"`); got != (tt.flag != "") {
				t.Errorf("deployment passes --namespace: %v, want %v", got, tt.flag != "")
			}
			csv := readCSV(t, filepath.Join(out, "bundle", filepath.Base(chart)), filepath.Base(chart))
			var modes []string
			for _, m := range csv.Spec.InstallModes {
				if m.Supported {
					modes = append(modes, string(m.Type))
				}
			}
			if strings.Join(modes, ",") != tt.modes || csv.Annotations["opctl.dev/watch-namespace"] != tt.annotation {
				t.Errorf("CSV install modes %v and annotation %q, want %s and %q", modes, csv.Annotations["opctl.dev/watch-namespace"], tt.modes, tt.annotation)
			}
			args := strings.Join(csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec.Containers[0].Args, " ")
			if got := strings.Contains(args, "--namespace=$(WATCH_NAMESPACE)"); got != (tt.flag != "") {
				t.Errorf("CSV args %q: want --namespace=$(WATCH_NAMESPACE) %v", args, tt.flag != "")
			}
		})
	}
}

// --rbac-scope namespace is honoured for a manager that reads no
// namespace, with a warning: it would be refused outside its Roles.
func TestRBACScopeNamespaceWarnsForAllNamespaces(t *testing.T) {
	out, res := packageTo(t, filepath.Join("testdata", "allns"), PackageOptions{PerTarget: map[string]TargetOptions{"chart": &ChartOptions{RBACScope: "namespace"}}})
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "--rbac-scope namespace: the manager reads no watch-namespace setting")
	}) {
		t.Errorf("warnings %q, want one about --rbac-scope namespace", res.Warnings)
	}
	if values := string(readFile(t, filepath.Join(out, "charts", "allns", "values.yaml"))); !strings.Contains(values, "  scope: namespace\n") {
		t.Error("values.yaml: want rbac.scope namespace as asked")
	}
}
