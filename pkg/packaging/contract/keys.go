package contract

import (
	"slices"
	"strings"
)

// Annotation keys opctl package writes (see the package documentation for
// their formats).
const (
	// InstallModes lists the supported install mode types (Chart.yaml).
	InstallModes = "opctl.dev/install-modes"
	// WatchNamespace names the settings the manager reads its watched
	// namespaces from, WatchNone or WatchUnknown.
	WatchNamespace = "opctl.dev/watch-namespace"
	// PodSecurity is the Pod Security level the shipped pods meet.
	PodSecurity = "opctl.dev/pod-security"
	// PodSecurityReasons says why each stricter level refuses the pods.
	PodSecurityReasons = "opctl.dev/pod-security-reasons"
	// RequiredValues lists the values the chart cannot render without
	// (Chart.yaml).
	RequiredValues = "opctl.dev/required-values"
	// CRDCharts names the CRD charts of a chart whose CRDs are in charts
	// of their own, comma-separated, in the order they install (Chart.yaml
	// of the main chart): the tenancy controller applies their CRDs as it
	// applies a chart's own.
	CRDCharts = "opctl.dev/crd-charts"
)

// Values of WatchNamespace besides a list of settings.
const (
	// WatchNone: the manager's code was parsed and reads no watch-namespace
	// setting, so it watches all namespaces (AllNamespaces only).
	WatchNone = "none"
	// WatchUnknown: no code of the manager was found to parse.
	WatchUnknown = "unknown"
)

// Install mode types, in the order InstallModes lists them.
const (
	OwnNamespace    = "OwnNamespace"
	SingleNamespace = "SingleNamespace"
	MultiNamespace  = "MultiNamespace"
	AllNamespaces   = "AllNamespaces"
)

// Pod Security levels, least strict first.
var Levels = []string{"privileged", "baseline", "restricted"}

// FormatInstallModes writes the supported modes in the contract's order.
func FormatInstallModes(supported map[string]bool) string {
	var out []string
	for _, m := range []string{OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces} {
		if supported[m] {
			out = append(out, m)
		}
	}
	return strings.Join(out, ",")
}

// ParseInstallModes reads an InstallModes value into the set of supported
// modes; unknown words are kept, so a newer writer is not misread.
func ParseInstallModes(v string) map[string]bool {
	out := map[string]bool{}
	for _, m := range strings.Split(v, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out[m] = true
		}
	}
	return out
}

// AllNamespacesOnly reports whether an InstallModes value supports neither
// OwnNamespace nor SingleNamespace nor MultiNamespace: the operator can
// only watch the whole cluster, so it cannot run for one tenant.
func AllNamespacesOnly(v string) bool {
	m := ParseInstallModes(v)
	return !m[OwnNamespace] && !m[SingleNamespace] && !m[MultiNamespace]
}

// LevelAtLeast reports whether level meets min (restricted meets all);
// an unknown level meets nothing but privileged.
func LevelAtLeast(level, min string) bool {
	i, j := slices.Index(Levels, level), slices.Index(Levels, min)
	return j <= 0 || (i >= 0 && i >= j)
}

// SplitValues is the value paths of a RequiredValues annotation.
func SplitValues(ann string) []string {
	var out []string
	for _, v := range strings.Split(ann, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
