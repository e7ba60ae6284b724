package testcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ContainerProcess is what the kubelet would run for the container named
// container (the first if "") of dep's pod named pod, for a process run
// outside a pod's namespaces (with a kubeconfig): its command and args
// with $(VAR) references expanded, and its environment as RunDeployment
// resolves it (envFrom, env, the downward API).
func (c *Cluster) ContainerProcess(ctx context.Context, dep *appsv1.Deployment, container, pod string) (args, env []string, err error) {
	tmpl := dep.Spec.Template
	ctr, err := pickContainer(tmpl.Spec.Containers, container)
	if err != nil {
		return nil, nil, fmt.Errorf("pod of Deployment %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	sa := tmpl.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	if env, err = c.containerEnv(ctx, &Pod{Name: pod, Namespace: dep.Namespace}, sa, tmpl.ObjectMeta, ctr); err != nil {
		return nil, nil, fmt.Errorf("pod of Deployment %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	return append(expandAll(ctr.Command, env), expandAll(ctr.Args, env)...), env, nil
}

// containerEnv is the container's environment as the kubelet sets it:
// envFrom first, then env in order, each value expanded from those before
// it, with the downward API and Secret and ConfigMap keys read as admin
// (the kubelet reads them with its own rights, not the pod's).
func (c *Cluster) containerEnv(ctx context.Context, pod *Pod, sa string, meta metav1.ObjectMeta, ctr corev1.Container) ([]string, error) {
	var env []string
	for _, from := range ctr.EnvFrom {
		data, err := c.sourceData(ctx, pod.Namespace, from.SecretRef, from.ConfigMapRef)
		if err != nil {
			return nil, err
		}
		for k, v := range data {
			env = append(env, from.Prefix+k+"="+v)
		}
	}
	for _, e := range ctr.Env {
		v, err := c.envValue(ctx, pod, sa, meta, ctr, e, env)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// envValue is one env var's value.
func (c *Cluster) envValue(ctx context.Context, pod *Pod, sa string, meta metav1.ObjectMeta, ctr corev1.Container, e corev1.EnvVar, before []string) (string, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return expandAll([]string{e.Value}, before)[0], nil
	case from.FieldRef != nil:
		return fieldValue(pod, sa, meta, from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		return resourceValue(ctr, from.ResourceFieldRef)
	case from.SecretKeyRef != nil:
		s, err := c.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, from.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", optional(err, from.SecretKeyRef.Optional)
		}
		return string(s.Data[from.SecretKeyRef.Key]), nil
	case from.ConfigMapKeyRef != nil:
		cm, err := c.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", optional(err, from.ConfigMapKeyRef.Optional)
		}
		return cm.Data[from.ConfigMapKeyRef.Key], nil
	}
	return "", fmt.Errorf("unsupported valueFrom")
}

// optional drops err for an optional reference.
func optional(err error, opt *bool) error {
	if opt != nil && *opt {
		return nil
	}
	return err
}

// fieldValue is the downward API's value of path for the pod.
func fieldValue(pod *Pod, sa string, meta metav1.ObjectMeta, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "spec.serviceAccountName":
		return sa, nil
	case "spec.nodeName":
		return "local", nil
	case "status.podIP", "status.hostIP":
		return "127.0.0.1", nil
	case "status.podIPs", "status.hostIPs":
		return "127.0.0.1", nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": meta.Labels, "metadata.annotations": meta.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %s", path)
}

// resourceValue is a resourceFieldRef's value, in units of its divisor.
func resourceValue(ctr corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resourceFieldRef %s", ref.Resource)
	}
	list := ctr.Resources.Limits
	if kind == "requests" {
		list = ctr.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return "0", nil
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	return strconv.FormatInt((q.MilliValue()+div.MilliValue()-1)/div.MilliValue(), 10), nil
}

// sourceData reads an envFrom source.
func (c *Cluster) sourceData(ctx context.Context, ns string, secret *corev1.SecretEnvSource, cm *corev1.ConfigMapEnvSource) (map[string]string, error) {
	out := map[string]string{}
	switch {
	case secret != nil:
		s, err := c.Client.CoreV1().Secrets(ns).Get(ctx, secret.Name, metav1.GetOptions{})
		if err != nil {
			return nil, optional(err, secret.Optional)
		}
		for k, v := range s.Data {
			out[k] = string(v)
		}
	case cm != nil:
		m, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
		if err != nil {
			return nil, optional(err, cm.Optional)
		}
		for k, v := range m.Data {
			out[k] = v
		}
	}
	return out, nil
}

// volumeMounts writes the files of the container's Secret, ConfigMap and
// emptyDir volumes under dir and returns their mounts.
func (c *Cluster) volumeMounts(ctx context.Context, ns string, vols []corev1.Volume, mounts []corev1.VolumeMount, dir string) ([]podMount, error) {
	var out []podMount
	for _, m := range mounts {
		i := volumeIndex(vols, m.Name)
		if i < 0 {
			return nil, fmt.Errorf("volumeMount %s names no volume", m.Name)
		}
		v := vols[i]
		src := filepath.Join(dir, v.Name)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return nil, err
		}
		files := map[string][]byte{}
		switch {
		case v.Secret != nil:
			s, err := c.Client.CoreV1().Secrets(ns).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				if err = optional(err, v.Secret.Optional); err != nil {
					return nil, fmt.Errorf("volume %s: %w", v.Name, err)
				}
			} else {
				files = s.Data
			}
		case v.ConfigMap != nil:
			cm, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				if err = optional(err, v.ConfigMap.Optional); err != nil {
					return nil, fmt.Errorf("volume %s: %w", v.Name, err)
				}
			} else {
				for k, s := range cm.Data {
					files[k] = []byte(s)
				}
			}
		case v.EmptyDir != nil:
		default:
			return nil, fmt.Errorf("volume %s: only Secret, ConfigMap and emptyDir volumes are mounted", v.Name)
		}
		if err := writeFiles(src, files); err != nil {
			return nil, err
		}
		target := m.MountPath
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
		}
		out = append(out, podMount{Source: src, Target: target})
	}
	return out, nil
}

func volumeIndex(vols []corev1.Volume, name string) int {
	for i, v := range vols {
		if v.Name == name {
			return i
		}
	}
	return -1
}

// copyConn copies src to dst until either ends.
func copyConn(dst, src net.Conn) (int64, error) { return io.Copy(dst, src) }
