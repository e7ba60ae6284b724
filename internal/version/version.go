package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Stamped with -ldflags -X; see the package documentation.
var (
	version = "dev"
	commit  = ""
)

// trackedLibraries are the modules whose versions opctl reports, in order.
// Only those linked into the running binary are listed.
var trackedLibraries = []string{
	"k8s.io/client-go",
	"k8s.io/apimachinery",
	"k8s.io/api",
	"k8s.io/apiextensions-apiserver",
	"sigs.k8s.io/controller-runtime",
	"helm.sh/helm/v3",
	"github.com/operator-framework/api",
	"github.com/operator-framework/operator-registry",
	"sigs.k8s.io/kustomize/api",
	"github.com/spf13/cobra",
}

// Library is one Go module linked into opctl.
type Library struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// Info describes the running opctl binary.
type Info struct {
	Version    string    `json:"version"`
	Commit     string    `json:"commit"`
	GoVersion  string    `json:"goVersion"`
	Platform   string    `json:"platform"`
	Kubernetes string    `json:"kubernetes"`
	Libraries  []Library `json:"libraries"`
}

// Get returns the build information of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{
		Version:   version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Libraries: []Library{},
	}
	if bi == nil {
		return info
	}
	if info.Commit == "" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Commit = s.Value
			}
		}
	}
	deps := map[string]string{}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		deps[d.Path] = d.Version
	}
	for _, path := range trackedLibraries {
		if v, ok := deps[path]; ok {
			info.Libraries = append(info.Libraries, Library{Path: path, Version: v})
		}
	}
	info.Kubernetes = kubernetesVersion(deps["k8s.io/client-go"])
	return info
}

// kubernetesVersion maps a client-go version (v0.36.3) to the Kubernetes
// release it belongs to (1.36.3).
func kubernetesVersion(clientGo string) string {
	if !strings.HasPrefix(clientGo, "v0.") {
		return ""
	}
	return "1." + strings.TrimPrefix(clientGo, "v0.")
}
