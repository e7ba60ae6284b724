package controller

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// valkeyUID is the valkey user of the official image.
const valkeyUID = 999

// defaultResources apply when spec.resources is empty.
var defaultResources = corev1.ResourceRequirements{
	Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
	Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
}

// startScript starts the server, as a replica of the primary that the
// ConfigMap names unless this pod is it. The operator repoints replicas at
// run time (REPLICAOF) on a failover; the file covers restarts.
const startScript = `set -e
cp /etc/valkey/` + configFile + ` /tmp/valkey.conf
primary="$(cat /etc/valkey/` + primaryFile + ` 2>/dev/null || true)"
if [ -n "$primary" ] && [ "$primary" != "$(hostname)" ]; then
  echo "replicaof $primary.$PEERS 6379" >> /tmp/valkey.conf
fi
exec valkey-server /tmp/valkey.conf --requirepass "$VALKEY_PASSWORD" --masterauth "$VALKEY_PASSWORD"
`

// passwordEnv reads the store's password from its Secret.
func passwordEnv(name, secret string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
		SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: passwordKey},
	}}
}

// statefulSet builds the StatefulSet skeleton: everything that does not
// come from the spec. Mutate fills in the rest.
func (h *Handler) statefulSet(k *kvv1.KVStore, n names) *appsv1.StatefulSet {
	ping := &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{
			"sh", "-c", `valkey-cli -a "$VALKEY_PASSWORD" --no-auth-warning ping | grep -q PONG`,
		}}},
		PeriodSeconds: 5, TimeoutSeconds: 2, FailureThreshold: 3,
	}
	container := corev1.Container{
		Name:    "valkey",
		Command: []string{"sh", "-c", startScript},
		Ports:   []corev1.ContainerPort{{Name: "valkey", ContainerPort: valkeyPort, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			passwordEnv("VALKEY_PASSWORD", n.secret),
			{Name: "PEERS", Value: fmt.Sprintf("%s.%s.svc", n.headless, k.Namespace)},
		},
		ReadinessProbe: ping,
		LivenessProbe: &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("valkey")}},
			InitialDelaySeconds: 10, PeriodSeconds: 10, TimeoutSeconds: 2, FailureThreshold: 3,
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To[int64](valkeyUID),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: "/data"},
			{Name: "config", MountPath: "/etc/valkey", ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"},
		},
	}
	exporter := corev1.Container{
		Name:  "exporter",
		Image: h.ExporterImage,
		Env: []corev1.EnvVar{
			{Name: "REDIS_ADDR", Value: fmt.Sprintf("redis://127.0.0.1:%d", valkeyPort)},
			passwordEnv("REDIS_PASSWORD", n.secret),
		},
		Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: exporterPort, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		SecurityContext: container.SecurityContext.DeepCopy(),
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: n.sts, Namespace: k.Namespace, Labels: commonLabels(k)},
		Spec: appsv1.StatefulSetSpec{
			ServiceName:         n.headless,
			Selector:            &metav1.LabelSelector{MatchLabels: selectorLabels(k)},
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: commonLabels(k)},
				Spec: corev1.PodSpec{
					ServiceAccountName:           n.sa,
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](valkeyUID),
						FSGroup:        ptr.To[int64](valkeyUID),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								TopologyKey:   "kubernetes.io/hostname",
								LabelSelector: &metav1.LabelSelector{MatchLabels: selectorLabels(k)},
							},
						}},
					}},
					Containers: []corev1.Container{container, exporter},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: n.config},
						}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}
