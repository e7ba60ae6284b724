package packaging

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// managerOf makes a project whose manager pod is spec, built as the
// overlay would give it.
func managerOf(t *testing.T, spec corev1.PodSpec) *Project {
	t.Helper()
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind, d.Name = "apps/v1", "Deployment", "op-controller-manager"
	d.Spec.Template.Spec = spec
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	return &Project{Manager: d, managerRaw: &unstructured.Unstructured{Object: raw}}
}

func TestHardenManager(t *testing.T) {
	manager := func(sc *corev1.SecurityContext) corev1.Container {
		return corev1.Container{Name: "manager", Image: "op:1", SecurityContext: sc}
	}
	numeric := parseDockerfile([]byte("FROM gcr.io/distroless/static:nonroot\nUSER 65532:65532\n"))
	named := parseDockerfile([]byte("FROM gcr.io/distroless/static:nonroot\nUSER nonroot:nonroot\n"))
	tests := []struct {
		name string
		spec corev1.PodSpec
		df   *dockerfile
		// level after; changed says opctl changed the pod; warn is what a
		// warning must hold.
		level   string
		changed bool
		warn    string
	}{
		{"already restricted", corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: "RuntimeDefault"}},
			Containers: []corev1.Container{manager(&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}})}},
			nil, "restricted", false, ""},
		{"the Dockerfile's numeric USER", corev1.PodSpec{Containers: []corev1.Container{manager(nil)}}, numeric, "restricted", true, "runAsNonRoot to true (the Dockerfile's final stage runs as USER 65532:65532)"},
		{"distroless's nonroot by name: runAsUser too", corev1.PodSpec{Containers: []corev1.Container{manager(nil)}}, named, "restricted", true, "uid 65532, which opctl sets as runAsUser"},
		{"the pod's runAsUser", corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000))}, Containers: []corev1.Container{manager(nil)}}, nil, "restricted", true, "(it runs as user 1000)"},
		{"nothing shows non-root", corev1.PodSpec{Containers: []corev1.Container{manager(nil)}}, nil, "baseline", false, "the project has no Dockerfile"},
		{"root", corev1.PodSpec{Containers: []corev1.Container{manager(&corev1.SecurityContext{RunAsUser: ptr.To(int64(0))})}}, numeric, "baseline", false, "container manager runs as user 0"},
		{"a privileged container", corev1.PodSpec{Containers: []corev1.Container{manager(&corev1.SecurityContext{Privileged: ptr.To(true)})}}, numeric, "privileged", false, "container manager is privileged"},
		{"an added capability", corev1.PodSpec{Containers: []corev1.Container{manager(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}})}}, numeric, "privileged", false, "adds capabilities [NET_ADMIN]"},
		{"runAsNonRoot false on purpose", corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false)}, Containers: []corev1.Container{manager(nil)}}, numeric, "baseline", false, "left them as they are"},
		{"a sidecar whose user is unknown", corev1.PodSpec{Containers: []corev1.Container{manager(nil), {Name: "proxy", Image: "proxy:1"}}}, numeric, "baseline", false, "nothing shows container proxy runs as non-root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := managerOf(t, tt.spec)
			before := p.Manager.DeepCopy()
			if err := p.hardenManager(tt.df); err != nil {
				t.Fatal(err)
			}
			if err := p.judgePodSecurity(); err != nil {
				t.Fatal(err)
			}
			if p.PodSecurity.Level != tt.level {
				t.Errorf("level %s, want %s (%s)", p.PodSecurity.Level, tt.level, p.PodSecurity.Reasons)
			}
			changed := p.hardening != nil
			if changed != tt.changed || !changed && !equalYAML(t, before, p.Manager) {
				t.Errorf("changed %v, want %v", changed, tt.changed)
			}
			if tt.warn != "" && !slices.ContainsFunc(p.warnings, func(w string) bool { return strings.Contains(w, tt.warn) }) {
				t.Errorf("warnings %q, want one holding %q", p.warnings, tt.warn)
			}
			if changed {
				// The built form carries it too: digest pinning reads it back.
				var back appsv1.Deployment
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(p.managerRaw.Object, &back); err != nil {
					t.Fatal(err)
				}
				if !equalYAML(t, &back.Spec.Template.Spec, &p.Manager.Spec.Template.Spec) {
					t.Error("the built manager lacks the hardened security contexts")
				}
			}
		})
	}
}

func equalYAML(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := yaml.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// The fixtures: a manager pod below restricted comes out restricted, a
// warning per change and podSecurity.restricted=false to undo them; one
// that needs hostNetwork is kept, recorded as privileged.
func TestPodSecurityFixtures(t *testing.T) {
	t.Run("belowrestricted", func(t *testing.T) {
		out, res := packageTo(t, filepath.Join("testdata", "belowrestricted"), PackageOptions{})
		if res.PodSecurity.Level != "restricted" || res.PodSecurity.Reasons != "" {
			t.Errorf("pod security %+v, want restricted", res.PodSecurity)
		}
		var changes []string
		for _, w := range res.Warnings {
			if strings.Contains(w, "so that its pods meet Pod Security restricted; the chart's podSecurity.restricted=false undoes it") {
				changes = append(changes, w)
			}
		}
		// seccompProfile; allowPrivilegeEscalation, drop ALL and
		// runAsNonRoot on the manager and on its proxy sidecar.
		if len(changes) != 7 {
			t.Errorf("%d warnings of changes, want 7: %q", len(changes), changes)
		}
		chart := filepath.Join(out, "charts", "belowrestricted")
		if meta := string(readFile(t, filepath.Join(chart, "Chart.yaml"))); !strings.Contains(meta, "opctl.dev/pod-security: restricted") || strings.Contains(meta, "pod-security-reasons") {
			t.Errorf("Chart.yaml:\n%s", meta)
		}
		for values, want := range map[string]bool{"": true, "off": false} {
			v := map[string]any{}
			if values == "off" {
				v["podSecurity"] = map[string]any{"restricted": false}
			}
			deploy := render(t, chart, "tenant-a", v)["belowrestricted/templates/deployment.yaml"]
			var d appsv1.Deployment
			if err := yaml.Unmarshal([]byte(deploy), &d); err != nil {
				t.Fatalf("%v\n%s", err, deploy)
			}
			p := &Project{Manager: &d}
			spec := d.Spec.Template.Spec
			got := spec.SecurityContext != nil && spec.SecurityContext.SeccompProfile != nil
			for _, c := range spec.Containers {
				sc := c.SecurityContext
				got = got && sc != nil && ptr.Deref(sc.RunAsNonRoot, false) && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation && slices.Contains(sc.Capabilities.Drop, "ALL")
			}
			if got != want {
				t.Errorf("podSecurity %q: hardened %v, want %v:\n%s", values, got, want, deploy)
			}
			if err := p.judgePodSecurity(); err != nil {
				t.Fatal(err)
			}
			if level := map[bool]string{true: "restricted", false: "baseline"}[want]; p.PodSecurity.Level != level {
				t.Errorf("podSecurity %q: the rendered pod is %s, want %s", values, p.PodSecurity.Level, level)
			}
		}
		csv := readCSV(t, filepath.Join(out, "bundle", "belowrestricted"), "belowrestricted")
		if csv.Annotations["opctl.dev/pod-security"] != "restricted" {
			t.Errorf("CSV annotations %v", csv.Annotations)
		}
		spec := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
		if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil || !ptr.Deref(spec.Containers[1].SecurityContext.RunAsNonRoot, false) {
			t.Errorf("the CSV's manager pod is not hardened: %+v", spec)
		}
	})
	t.Run("hostnetwork", func(t *testing.T) {
		out, res := packageTo(t, filepath.Join("testdata", "hostnetwork"), PackageOptions{})
		if res.PodSecurity.Level != "privileged" || !strings.Contains(res.PodSecurity.Reasons, "baseline: Deployment/hostnetwork-controller-manager: host namespaces (hostNetwork=true)") {
			t.Errorf("pod security %+v, want privileged for hostNetwork", res.PodSecurity)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool {
			return strings.Contains(w, "its pods meet Pod Security privileged, not restricted") && strings.Contains(w, "left them as they are")
		}) {
			t.Errorf("warnings %q, want one saying the pods are privileged and kept", res.Warnings)
		}
		chart := filepath.Join(out, "charts", "hostnetwork")
		var meta struct{ Annotations map[string]string }
		if err := yaml.Unmarshal(readFile(t, filepath.Join(chart, "Chart.yaml")), &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Annotations["opctl.dev/pod-security"] != "privileged" || !strings.HasPrefix(meta.Annotations["opctl.dev/pod-security-reasons"], "baseline: Deployment/hostnetwork-controller-manager: host namespaces (hostNetwork=true); restricted: ") {
			t.Errorf("Chart.yaml annotations %v", meta.Annotations)
		}
		if deploy := string(readFile(t, filepath.Join(chart, "templates", "deployment.yaml"))); !strings.Contains(deploy, "hostNetwork: true") || strings.Contains(deploy, ".restricted") {
			t.Errorf("the chart changed the pod:\n%s", deploy)
		}
	})
}

// Digest pinning rebuilds the manager from its built form: the hardening
// stays.
func TestPinningKeepsPodSecurity(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "belowrestricted"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PinDigests(context.Background(), fixedDigest{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if sc := p.Manager.Spec.Template.Spec.SecurityContext; sc == nil || sc.SeccompProfile == nil {
		t.Errorf("pinning dropped the pod's seccompProfile: %+v", sc)
	}
}

type fixedDigest struct{}

func (fixedDigest) Digest(context.Context, string) (string, error) {
	return "sha256:" + strings.Repeat("a", 64), nil
}
