package testcluster

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Two pods of one Deployment-like spec, each in its namespace, run at
// once on the same port: each is its ServiceAccount to the API server,
// finds its namespace file and its downward-API env, reaches the API
// server but not the test's own loopback, and answers its readiness
// probe through the runner.
func TestRunDeployment(t *testing.T) {
	c := Require(t, cluster)
	ctx := context.Background()
	bin, err := GoBuild(t.TempDir(), "opctl.dev/opctl/internal/testcluster/testdata/podprobe", "")
	if err != nil {
		t.Fatal(err)
	}
	outside, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	var pods []*Pod
	var nss []string
	for i := range 2 {
		ns := c.Namespace(t, fmt.Sprintf("pod-runner-%d", i), nil)
		nss = append(nss, ns)
		if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "probe"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "probe", Namespace: ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"greeting": "hello " + ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{ServiceAccountName: "probe", Containers: []corev1.Container{{
				Name: "probe", Command: []string{"/probe"}, Args: []string{"--watch=$(WATCH_NAMESPACE)", "$$literal"},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "greeting"}}},
					{Name: "PROBE_PORT", Value: "8081"},
					{Name: "OUTSIDE", Value: outside.Addr().String()},
				},
				Ports:          []corev1.ContainerPort{{Name: "health", ContainerPort: 8081}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("health")}}},
			}}}}}}
		p := c.RunDeployment(t, bin, dep, "")
		p.WaitReady(t, dep, "", 30*time.Second)
		pods = append(pods, p)
	}
	for i, p := range pods {
		cm, err := c.Client.CoreV1().ConfigMaps(nss[i]).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %s wrote no ConfigMap: %v\n%s", p.Name, err, p.Log())
		}
		want := map[string]string{"user": "system:serviceaccount:" + nss[i] + ":probe", "namespace": nss[i], "watch": nss[i],
			"greeting": "hello " + nss[i], "args": "[--watch=" + nss[i] + " $literal]", "outside": "no", "hostname": p.Name}
		for k, v := range want {
			if cm.Data[k] != v {
				t.Errorf("pod %s: %s = %q, want %q", p.Name, k, cm.Data[k], v)
			}
		}
	}
}
