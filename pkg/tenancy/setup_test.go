package tenancy

import (
	"maps"
	"strings"
	"testing"

	helmrelease "opctl.dev/opctl/pkg/tenancy/internal/helmrelease"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestSlimDeployment(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status appsv1.DeploymentStatus
	}{
		{"rolled out", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}},
		{"old generation", appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}},
		{"old replica left", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 3}},
		{"not available", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "op", Namespace: "t1", Generation: 2,
					Labels:      map[string]string{"app.kubernetes.io/instance": "kv", tenancyv1.LabelTenant: "t", "shard.sharding.opctl.dev/tenancy": "a", "padding": strings.Repeat("x", 63)},
					Annotations: map[string]string{"meta.helm.sh/release-name": "kv"}, Finalizers: []string{"example.com/hold"},
					OwnerReferences: []metav1.OwnerReference{{Kind: "Tenant", Name: "t"}}},
				Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "manager", Image: "opctl/kvstore-operator:0.1.0"}}}}},
				Status: tc.status,
			}
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
			want := helmrelease.RolledOut(d)
			o, err := slimDeployment(d.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			slim := o.(*appsv1.Deployment)
			if got := helmrelease.RolledOut(slim); got != want {
				t.Errorf("rolledOut after slimming = %t, before %t", got, want)
			}
			// Only the labels it selects by: an owner's large labels or
			// finalizers are not kept for it.
			wantLabels := map[string]string{"app.kubernetes.io/instance": "kv", tenancyv1.LabelTenant: "t", "shard.sharding.opctl.dev/tenancy": "a"}
			if len(slim.Spec.Template.Spec.Containers) != 0 || slim.Annotations != nil || !maps.Equal(slim.Labels, wantLabels) ||
				slim.Finalizers != nil || slim.OwnerReferences != nil || *slim.Spec.Replicas != 2 {
				t.Errorf("slimmed Deployment %+v", slim)
			}
		})
	}
}

func TestSlimRelease(t *testing.T) {
	helm := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "op", Namespace: "t1", ResourceVersion: "7",
			Labels:        map[string]string{guard.HelmManagedBy: "Helm", tenancyv1.LabelTenant: "t1"},
			Annotations:   map[string]string{"meta.helm.sh/release-name": "kv"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "helm"}}}
	}
	slim := func() metav1.ObjectMeta {
		m := helm()
		m.Annotations, m.ManagedFields = nil, nil
		return m
	}
	own := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "owner", Namespace: "t1", Labels: map[string]string{tenancyv1.LabelTenant: "t1"},
			Annotations: map[string]string{"opctl.dev/hash": "h"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "opctl"}}}
	}
	ownKept := func() metav1.ObjectMeta {
		m := own()
		m.ManagedFields = nil
		return m
	}
	// A tenant can label an object as Helm's: one with a controller
	// reference is the controller's and stays whole all the same.
	ownedHelm := func() metav1.ObjectMeta {
		m := own()
		m.Labels[guard.HelmManagedBy] = "Helm"
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "tenancy.opctl.dev/v1alpha1", Kind: "Tenant", Name: "t1", UID: "u1", Controller: ptr.To(true)}}
		return m
	}
	ownedHelmKept := func() metav1.ObjectMeta {
		m := ownedHelm()
		m.ManagedFields = nil
		return m
	}
	rules := []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"configmaps"}}}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "op"}}
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "op"}
	for _, tc := range []struct {
		name     string
		in, want any
	}{
		{"release Role", &rbacv1.Role{ObjectMeta: helm(), Rules: rules}, &rbacv1.Role{ObjectMeta: slim()}},
		{"release RoleBinding", &rbacv1.RoleBinding{ObjectMeta: helm(), Subjects: subjects, RoleRef: ref}, &rbacv1.RoleBinding{ObjectMeta: slim()}},
		{"release ServiceAccount", &corev1.ServiceAccount{ObjectMeta: helm(), AutomountServiceAccountToken: ptr.To(false),
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}}}, &corev1.ServiceAccount{ObjectMeta: slim()}},
		{"owner RoleBinding stays whole", &rbacv1.RoleBinding{ObjectMeta: own(), Subjects: subjects, RoleRef: ref},
			&rbacv1.RoleBinding{ObjectMeta: ownKept(), Subjects: subjects, RoleRef: ref}},
		{"owned RoleBinding with Helm's label stays whole", &rbacv1.RoleBinding{ObjectMeta: ownedHelm(), Subjects: subjects, RoleRef: ref},
			&rbacv1.RoleBinding{ObjectMeta: ownedHelmKept(), Subjects: subjects, RoleRef: ref}},
		{"not an object", "tombstone", "tombstone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := slimRelease(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("slimRelease = %+v, want %+v", got, tc.want)
			}
		})
	}
}
