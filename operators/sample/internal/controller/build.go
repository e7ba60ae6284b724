package controller

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// Build returns the objects a KVStore owns, named and with their defaults.
func (h *Handler) Build(ctx context.Context, k *kvv1.KVStore) ([]client.Object, error) {
	n := namesOf(k)
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: k.Namespace, Labels: commonLabels(k)}
	}
	password, err := h.password(ctx, k.Namespace, n.secret)
	if err != nil {
		return nil, err
	}
	port := corev1.ServicePort{Name: "valkey", Port: valkeyPort, TargetPort: intstr.FromString("valkey"), Protocol: corev1.ProtocolTCP}
	metrics := corev1.ServicePort{Name: "metrics", Port: exporterPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(n.sa), AutomountServiceAccountToken: ptr.To(false)},
		&corev1.ConfigMap{ObjectMeta: meta(n.config)},
		&corev1.Secret{ObjectMeta: meta(n.secret), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{passwordKey: password}},
		&corev1.Service{ObjectMeta: meta(n.headless), Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, PublishNotReadyAddresses: true,
			Selector: selectorLabels(k), Ports: []corev1.ServicePort{port, metrics},
		}},
		&corev1.Service{ObjectMeta: meta(n.client), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: roleLabels(k, RolePrimary), Ports: []corev1.ServicePort{port},
		}},
		&corev1.Service{ObjectMeta: meta(n.readOnly), Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: roleLabels(k, RoleReplica), Ports: []corev1.ServicePort{port},
		}},
		h.statefulSet(k, n),
		&policyv1.PodDisruptionBudget{ObjectMeta: meta(n.pdb), Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels(k)},
		}},
	}
	if h.monitored() {
		objs = append(objs, serviceMonitor(k))
	}
	return objs, nil
}

// password returns the password in the existing Secret, or a new random
// one. A password is generated once and never replaced.
func (h *Handler) password(ctx context.Context, namespace, name string) ([]byte, error) {
	s := &corev1.Secret{}
	err := h.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s)
	switch {
	case err == nil && len(s.Data[passwordKey]) > 0:
		return s.Data[passwordKey], nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("reading Secret %s: %w", name, err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generating password: %w", err)
	}
	return []byte(base64.RawURLEncoding.EncodeToString(raw)), nil
}
