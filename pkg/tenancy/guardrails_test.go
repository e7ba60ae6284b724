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
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/cli"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// renderOpctl renders charts/opctl as a release "opctl" in the storage
// namespace with its default values, as a platform team installs it.
func renderOpctl(values map[string]any) (map[string]string, error) {
	ch, err := loader.Load("../../charts/opctl")
	if err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "opctl", Namespace: tenancy.DefaultStorageNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	rendered, err := engine.Render(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering charts/opctl: %w", err)
	}
	return rendered, nil
}

// chartControllerOptions are the controller's options as charts/opctl's
// Deployment sets them, parsed with `opctl tenancy run`'s own flags.
func chartControllerOptions() (tenancy.Options, error) {
	rendered, err := renderOpctl(nil)
	if err != nil {
		return tenancy.Options{}, err
	}
	for name, body := range rendered {
		if !strings.HasSuffix(name, "deployment.yaml") {
			continue
		}
		dep := &appsv1.Deployment{}
		if err := yaml.Unmarshal([]byte(body), dep); err != nil {
			return tenancy.Options{}, fmt.Errorf("%s: %w", name, err)
		}
		for _, ctr := range dep.Spec.Template.Spec.Containers {
			if ctr.Name == "manager" {
				return cli.TenancyRunOptions(ctr.Args)
			}
		}
	}
	return tenancy.Options{}, fmt.Errorf("charts/opctl renders no Deployment with a manager container")
}

// checkNoTestGrants fails, after the tests, when a ClusterRoleBinding or
// RoleBinding that charts/opctl does not render binds the controller's
// ServiceAccount: what a test grants the controller, a user does not get.
func checkNoTestGrants(c *testcluster.Cluster) error {
	ctx := context.Background()
	chart := map[string]bool{}
	for _, o := range controllerRBAC {
		chart[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	names := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && "system:serviceaccount:"+s.Namespace+":"+s.Name == controllerUser
		})
	}
	var extra []string
	crbs, err := c.Client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range crbs.Items {
		if names(b.Subjects) && !chart["ClusterRoleBinding//"+b.Name] {
			extra = append(extra, "ClusterRoleBinding "+b.Name+" of "+b.RoleRef.Name)
		}
	}
	rbs, err := c.Client.RbacV1().RoleBindings("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, b := range rbs.Items {
		if names(b.Subjects) && !chart["RoleBinding/"+b.Namespace+"/"+b.Name] {
			extra = append(extra, "RoleBinding "+b.Namespace+"/"+b.Name+" of "+b.RoleRef.Name)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("tests granted the controller what charts/opctl does not: %s", strings.Join(extra, ", "))
	}
	return nil
}

// applyOpctl applies the objects of charts/opctl whose kinds keep says,
// and returns them.
func applyOpctl(ctx context.Context, cl client.Client, values map[string]any, keep func(u *unstructured.Unstructured) bool) ([]*unstructured.Unstructured, error) {
	rendered, err := renderOpctl(values)
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
			if len(u.Object) == 0 || !keep(u) {
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
	objs, err := applyOpctl(ctx, cl, nil, func(u *unstructured.Unstructured) bool {
		return strings.HasPrefix(u.GetKind(), "ValidatingAdmissionPolicy")
	})
	if err != nil {
		return err
	}
	if len(objs) != 18 {
		return fmt.Errorf("charts/opctl has %d guardrail policies and bindings, want 9 of each", len(objs))
	}
	return nil
}

// controllerIdentity applies the ServiceAccount and RBAC of charts/opctl
// to the cluster tc (admin client c), and returns a configuration and a
// kubeconfig (written in dir) that authenticate with a token of that
// ServiceAccount. Every controller the tests run uses them, so it has
// exactly the rights the chart grants, never an admin's, and no test
// grants it more (checkNoTestGrants).
func controllerIdentity(ctx context.Context, tc *testcluster.Cluster, c client.Client, dir string) (*rest.Config, string, error) {
	rbac := map[string]bool{"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true}
	objs, err := applyOpctl(ctx, c, nil, func(u *unstructured.Unstructured) bool { return rbac[u.GetKind()] })
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
