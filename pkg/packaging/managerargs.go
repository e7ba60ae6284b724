package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Flags of kubebuilder's manager (cmd/main.go) that chart values set.
const (
	metricsBindFlag   = "--metrics-bind-address="
	metricsSecureFlag = "--metrics-secure"
)

// ManagerArgs sorts the manager's args: the ones the chart templates from
// its values and the rest, which become the args value.
type ManagerArgs struct {
	// Plain are the args a user may override (the args value).
	Plain []string
	// MetricsHost and MetricsPort split --metrics-bind-address; MetricsPort
	// is 0 without the flag (or with the flag set to 0, disabled).
	MetricsHost string
	MetricsPort int
	// MetricsSecure is the manager's --metrics-secure setting; SecureFlag
	// says whether the manager has that flag at all.
	MetricsSecure, SecureFlag bool
}

// managerArgs analyses the manager container's args. A manager whose Go
// sources define --metrics-secure (kubebuilder go/v4) has it even when the
// overlay does not pass it; it then defaults to true.
func (p *Project) managerArgs() ManagerArgs {
	c := managerContainer(p.Manager)
	images := map[int]bool{}
	for _, img := range OperandImages(*c) {
		if img.Env == "" {
			images[img.Arg] = true
		}
	}
	a := ManagerArgs{MetricsSecure: true, SecureFlag: p.inputs != nil && p.inputs.secureFlag}
	for i, arg := range c.Args {
		switch {
		case images[i]:
		case strings.HasPrefix(arg, metricsBindFlag):
			addr := strings.TrimPrefix(arg, metricsBindFlag)
			host, port, ok := strings.Cut(addr, ":")
			if n, err := strconv.Atoi(port); ok && err == nil && n > 0 && n < 65536 {
				a.MetricsHost, a.MetricsPort = host, n
			} else {
				a.Plain = append(a.Plain, arg)
			}
		case arg == metricsSecureFlag || strings.HasPrefix(arg, metricsSecureFlag+"="):
			a.SecureFlag = true
			v, err := strconv.ParseBool(strings.TrimPrefix(strings.TrimPrefix(arg, metricsSecureFlag), "="))
			a.MetricsSecure = err != nil || v || arg == metricsSecureFlag
		default:
			a.Plain = append(a.Plain, arg)
		}
	}
	if a.MetricsPort == 0 {
		a.SecureFlag = false // the chart only sets it next to the port
	}
	return a
}

// definesFlag reports whether the manager's Go sources (cmd/ or main.go)
// define a flag of that name. Nothing is built: it looks for the quoted
// name in a flag definition.
func definesFlag(dir, name string) bool {
	var files []string
	for _, pattern := range []string{"main.go", "cmd/*.go", "cmd/*/*.go"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), `"`+name+`"`) && strings.Contains(string(b), "flag.") {
			return true
		}
	}
	return false
}

// templateArgs renders the manager args: the metrics flags from
// .Values.metrics, operand image flags from .Values.relatedImages, the
// watch-namespace flag (watchFlag, when the manager reads its namespaces
// from a flag only) when there are namespaces to watch, then .Values.args.
func (t *templater) templateArgs(a ManagerArgs, images []RelatedImage, c corev1.Container, watchFlag string) []any {
	var list []any
	if watchFlag != "" {
		list = append(list, map[string]any{t.line(func(indent int) string {
			pad := strings.Repeat(" ", indent)
			return fmt.Sprintf("%s{{- with include \"%s.watchNamespaces\" . }}\n%s- {{ printf \"%s=%%s\" . | quote }}\n%s{{- end }}", pad, t.chart, pad, watchFlag, pad)
		}): ""})
	}
	if a.MetricsPort != 0 {
		list = append(list, t.token(`"`+metricsBindFlag+a.MetricsHost+`:{{ .Values.metrics.port }}"`))
		if a.SecureFlag {
			list = append(list, t.token(`"`+metricsSecureFlag+`={{ .Values.metrics.secure }}"`))
		}
	}
	for _, img := range OperandImages(c) {
		if img.Env == "" && listed(images, img.Key) {
			list = append(list, t.token(fmt.Sprintf(`{{ printf "%%s%%s" %q (index .Values.relatedImages %q) | quote }}`, img.Flag, img.Key)))
		}
	}
	return append(list, map[string]any{t.line(func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return fmt.Sprintf("%s{{- range .Values.args }}\n%s- %s\n%s{{- end }}", pad, pad, t.filled("."), pad)
	}): ""})
}

// templatePorts takes the manager's metrics containerPort from
// .Values.metrics.port.
func (t *templater) templatePorts(container map[string]any, a ManagerArgs) {
	if a.MetricsPort == 0 {
		return
	}
	ports, _ := container["ports"].([]any)
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok && toInt(m["containerPort"]) == int64(a.MetricsPort) {
			m["containerPort"] = t.token("{{ .Values.metrics.port }}")
		}
	}
}

// templateServicePorts takes the ports of a Service in front of the
// manager's metrics endpoint from .Values.metrics.port: the port and a
// numeric targetPort equal to the manager's metrics port.
func (t *templater) templateServicePorts(svc map[string]any, a ManagerArgs) {
	if a.MetricsPort == 0 {
		return
	}
	spec, _ := svc["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	for _, p := range ports {
		m, ok := p.(map[string]any)
		if !ok {
			continue
		}
		_, named := m["targetPort"].(string)
		target := toInt(m["targetPort"])
		if named || (target != 0 && target != int64(a.MetricsPort)) || (target == 0 && toInt(m["port"]) != int64(a.MetricsPort)) {
			continue
		}
		if toInt(m["port"]) == int64(a.MetricsPort) {
			m["port"] = t.token("{{ .Values.metrics.port }}")
		}
		m["targetPort"] = t.token("{{ .Values.metrics.port }}")
	}
}
