package podsecurity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestEvaluate(t *testing.T) {
	restricted := func() corev1.PodSpec {
		return corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{{Name: "c", SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(*corev1.PodSpec)
		level  string
		// reasons must hold these, in Reasons's format.
		reasons []string
	}{
		{"restricted", func(*corev1.PodSpec) {}, Restricted, nil},
		{"no seccompProfile", func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil }, Baseline, []string{"restricted: seccompProfile"}},
		{"hostNetwork", func(s *corev1.PodSpec) { s.HostNetwork = true }, Privileged, []string{"baseline: host namespaces (hostNetwork=true); restricted: host namespaces"}},
		{"privileged container", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Privileged = ptr.To(true) }, Privileged, []string{"baseline: privileged (container \"c\" must not set securityContext.privileged=true)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := restricted()
			tt.mutate(&spec)
			r, err := Evaluate(nil, &spec)
			if err != nil {
				t.Fatal(err)
			}
			if r.Level != tt.level {
				t.Errorf("level %s, want %s (%s)", r.Level, tt.level, r.Reasons())
			}
			for _, want := range tt.reasons {
				if !strings.Contains(r.Reasons(), want) {
					t.Errorf("reasons %q, want %q", r.Reasons(), want)
				}
			}
			if (r.Reasons() == "") != (tt.level == Restricted) || !r.Meets(tt.level) || (tt.level != Restricted && r.Meets(Restricted)) {
				t.Errorf("result %+v inconsistent with level %s", r, tt.level)
			}
		})
	}
}
