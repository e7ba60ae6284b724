package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// renderOpctl renders charts/opctl as a release "opctl" in the storage
// namespace with its default values, as a platform team installs it.
func renderOpctl() (map[string]string, error) {
	ch, err := loader.Load("../../charts/opctl")
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "opctl", Namespace: tenancy.DefaultStorageNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	rendered, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering charts/opctl: %w", err)
	}
	return rendered, nil
}

// applyOpctl applies the objects of charts/opctl whose kinds keep says,
// and returns them.
func applyOpctl(ctx context.Context, cl client.Client, keep func(kind string) bool) ([]*unstructured.Unstructured, error) {
	rendered, err := renderOpctl()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(rendered)) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(rendered[name], "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(u.Object) == 0 || !keep(u.GetKind()) {
				continue
			}
			if u.GetNamespace() == "" && u.GetKind() != "ClusterRole" && u.GetKind() != "ClusterRoleBinding" && !strings.HasPrefix(u.GetKind(), "ValidatingAdmissionPolicy") {
				u.SetNamespace(tenancy.DefaultStorageNamespace)
			}
			if err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("opctl-tests"), client.ForceOwnership); err != nil {
				return nil, fmt.Errorf("applying %s %s from %s: %w", u.GetKind(), u.GetName(), name, err)
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// installGuardrails applies the ValidatingAdmissionPolicies and bindings
// of charts/opctl: what a platform team gets from the chart.
func installGuardrails(ctx context.Context) error {
	objs, err := applyOpctl(ctx, cl, func(kind string) bool { return strings.HasPrefix(kind, "ValidatingAdmissionPolicy") })
	if err != nil {
		return err
	}
	if len(objs) != 18 {
		return fmt.Errorf("charts/opctl has %d guardrail policies and bindings, want 9 of each", len(objs))
	}
	return nil
}

// controllerIdentity applies the ServiceAccount and RBAC of charts/opctl
// to the cluster tc (admin client c), with the ClusterRole the tests'
// platform names for tenants (platformRole), and returns a configuration
// and a kubeconfig (written in dir) that authenticate with a token of
// that ServiceAccount. Every controller the tests run uses them, so it
// has exactly the rights the chart grants, never an admin's.
func controllerIdentity(ctx context.Context, tc *testcluster.Cluster, c client.Client, dir string) (*rest.Config, string, error) {
	reader := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: platformRole},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"monitoring.coreos.com"}, Resources: []string{"servicemonitors", "podmonitors", "prometheusrules"}, Verbs: []string{"*"}}}}
	err := c.Create(ctx, reader)
	if apierrors.IsAlreadyExists(err) {
		live := &rbacv1.ClusterRole{}
		if err = c.Get(ctx, client.ObjectKeyFromObject(reader), live); err == nil {
			live.Rules = reader.Rules
			err = c.Update(ctx, live)
		}
	}
	if err != nil {
		return nil, "", err
	}
	rbac := map[string]bool{"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}
	objs, err := applyOpctl(ctx, c, func(kind string) bool { return rbac[kind] })
	if err != nil {
		return nil, "", err
	}
	controllerRBAC = objs
	sa := ""
	for _, o := range objs {
		if o.GetKind() == "ServiceAccount" {
			sa = o.GetName()
		}
	}
	if sa == "" {
		return nil, "", fmt.Errorf("charts/opctl renders no ServiceAccount")
	}
	// The controller passes on only what it holds: the platform binds the
	// ClusterRoles it names for tenants to the controller as well.
	pass := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: platformRole + "-controller"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: platformRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: tenancy.DefaultStorageNamespace}}}
	if err := c.Create(ctx, pass); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, "", err
	}
	controllerUser = "system:serviceaccount:" + tenancy.DefaultStorageNamespace + ":" + sa
	cfg, err := tc.ServiceAccountTokenConfigFor(ctx, tenancy.DefaultStorageNamespace, sa, 24*time.Hour)
	if err != nil {
		return nil, "", err
	}
	kubeconfig := filepath.Join(dir, "controller-"+suffix()+".kubeconfig")
	if err := tc.WriteTokenKubeconfig(kubeconfig, cfg); err != nil {
		return nil, "", err
	}
	return cfg, kubeconfig, nil
}
