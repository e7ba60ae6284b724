package tenancy

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func testScope(t *testing.T) guard.ReleaseScope {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), meta.RESTScopeRoot)
	owned := func(name, rel, ns string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			guard.AnnotationReleaseName: rel, guard.AnnotationReleaseNamespace: ns}}}
	}
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		owned("kv-ns-a-manager", "kv", "ns-a"),
		owned("kv-ns-a-stolen", "kv", "ns-b"),
		// The platform's namespace, and one another tenant was given.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns-b", Labels: map[string]string{tenancyv1.LabelTenant: "b"}}},
	).Build()
	return guard.ReleaseScope{Tenant: "a", Release: "kv", Namespace: "ns-a", Namespaces: []string{"ns-a", "ns-a2"}, Mapper: m, Reader: reader,
		Grants: guard.GrantPolicy{Namespaces: []string{"ns-a", "ns-a2"}, Reader: reader, Mapper: m}}
}

func TestReleaseScope(t *testing.T) {
	s := testScope(t)
	cases := []struct {
		name, manifest, want string // want: a substring of the one foreign object, or ""
	}{
		{"namespaced, release namespace", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n", ""},
		{"namespaced, another tenant namespace", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n  namespace: ns-a2\n", ""},
		{"namespaced, foreign", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: victim\n  namespace: kube-system\n", "ConfigMap kube-system/victim"},
		{"cluster-scoped, this release's", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: kv-ns-a-manager\n", ""},
		{"cluster-scoped, release-qualified, absent", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: opctl.a.kv.manager\n", ""},
		{"cluster-scoped, containing the release name, absent", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: kv-owner-team-c\n", "not named opctl.a.kv."},
		{"cluster-scoped, qualified for another tenant, absent", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: opctl.b.kv.manager\n", "not named opctl.a.kv."},
		{"cluster-scoped, qualified for another release, absent", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: opctl.a.kv2.manager\n", "not named opctl.a.kv."},
		{"cluster-scoped, not named for it", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: cluster-admin\n", "ClusterRole cluster-admin (cluster-scoped, not named"},
		{"cluster-scoped, another release's", "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: kv-ns-a-stolen\n", "owned by another release"},
		{"a namespace", "kind: Namespace\napiVersion: v1\nmetadata:\n  name: kube-system\n", "Namespace kube-system"},
		{"unknown kind without namespace", "kind: Widget\napiVersion: example.com/v1\nmetadata:\n  name: w\n", "unknown kind"},
		{"unknown kind in the tenant", "kind: Widget\napiVersion: example.com/v1\nmetadata:\n  name: w\n  namespace: ns-a\n", ""},
		{"no name", "kind: ConfigMap\napiVersion: v1\nmetadata: {}\n", "without kind or name"},
		{"items in any kind", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: wrapper\nitems:\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata:\n    name: pwn\n", "ConfigMap wrapper (a list"},
		{"a List", "kind: List\napiVersion: v1\nmetadata:\n  name: l\n  namespace: ns-a\n", "(a list"},
		{"unreadable", "kind: [\n", "unreadable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Foreign(context.Background(), "---\n"+tc.manifest)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("foreign %v, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("foreign %v, want one naming %q", got, tc.want)
			}
		})
	}
}

func TestVerifyRevisions(t *testing.T) {
	s := testScope(t)
	ctx := context.Background()
	clean := testRelease("kv", "ns-a", 1, release.StatusDeployed, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n")
	if err := s.Verify(ctx, clean, nil); err != nil {
		t.Errorf("clean revision: %v", err)
	}
	hooked := testRelease("kv", "ns-a", 2, release.StatusDeployed, clean.Manifest)
	hooked.Hooks = []*release.Hook{{Name: "pre-delete", Manifest: "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: v\n  namespace: kube-system\n"}}
	var te *guard.TamperError
	// Hooks never run for a tenant's release, so a stored one blocks
	// nothing; a foreign object of the manifest does.
	if err := s.Verify(ctx, clean, hooked); err != nil {
		t.Errorf("a revision with a foreign hook, which never runs: %v", err)
	}
	foreign := testRelease("kv", "ns-a", 3, release.StatusDeployed, hooked.Hooks[0].Manifest)
	if err := s.Verify(ctx, clean, foreign); !errors.As(err, &te) || te.What != "revision 3" || !strings.Contains(te.Error(), "kube-system/v") {
		t.Errorf("a foreign object: %v", err)
	}
	g := guard.RenderGuard{Ctx: ctx, Scope: s, Labels: map[string]string{tenancyv1.LabelTenant: "a"}}
	out, err := g.Run(bytes.NewBufferString("---\n# Source: c/templates/cm.yaml\n" + clean.Manifest + "---\n# Source: c/templates/two.yaml\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: z\n  labels:\n    keep: me\n"))
	if err != nil {
		t.Fatalf("guard on a clean render: %v", err)
	}
	// Objects without a namespace get the release's (Helm's own default
	// would be "default").
	want := "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    tenancy.opctl.dev/tenant: a\n  name: x\n  namespace: ns-a\n" +
		"---\n# Source: c/templates/two.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    keep: me\n    tenancy.opctl.dev/tenant: a\n  name: z\n  namespace: ns-a\n"
	if out.String() != want {
		t.Errorf("labelled manifest:\n%s\nwant:\n%s", out, want)
	}
	if _, err := g.Run(bytes.NewBufferString(hooked.Hooks[0].Manifest)); !errors.As(err, &te) || te.What != "the rendered chart" {
		t.Errorf("guard on a foreign render: %v", err)
	}
}

// A failure to read the cluster is an error to retry, never a finding.
func TestVerifyReadError(t *testing.T) {
	s := testScope(t)
	s.Reader = fake.NewClientBuilder().WithScheme(Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()
	rel := testRelease("kv", "ns-a", 1, release.StatusDeployed, "kind: ClusterRole\napiVersion: rbac.authorization.k8s.io/v1\nmetadata:\n  name: kv-ns-a-manager\n")
	var te *guard.TamperError
	if err := s.Verify(context.Background(), rel); err == nil || errors.As(err, &te) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("verify with the cluster unreadable: %v, want a plain error", err)
	}
}

func testRelease(name, ns string, version int, status release.Status, manifest string) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: version, Manifest: manifest,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "0.1.0"}},
	}
}

// A namespace the Tenant is leaving, or has lost, holds objects of its
// stored revisions until Helm deletes them: Verify accepts them there, but
// nothing may be applied there again, neither a rollback target nor a
// render.
func TestVerifyLeavingNamespaces(t *testing.T) {
	s := testScope(t)
	s.Leaving = []string{"ns-left"}
	ctx := context.Background()
	left := testRelease("kv", "ns-a", 1, release.StatusDeployed, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n  namespace: ns-left\n")
	if err := s.Verify(ctx, left); err != nil {
		t.Errorf("a stored object in a namespace the tenant is leaving: %v", err)
	}
	var te *guard.TamperError
	if err := s.VerifyApply(ctx, left); !errors.As(err, &te) || !strings.Contains(err.Error(), "ns-left/x") {
		t.Errorf("a rollback target into a namespace the tenant is leaving: %v", err)
	}
	g := guard.RenderGuard{Ctx: ctx, Scope: s, Labels: map[string]string{tenancyv1.LabelTenant: "a"}}
	if _, err := g.Run(bytes.NewBufferString(left.Manifest)); !errors.As(err, &te) {
		t.Errorf("a render into a namespace the tenant is leaving: %v", err)
	}
	// A namespace the tenant has lost (here: absent; or made again for
	// another tenant) holds nothing of its: Helm, deleting as its actor,
	// finds nothing there, or is refused. Only a stored revision may name
	// objects there; a platform namespace (kube-system) stays foreign
	// (TestVerifyRevisions).
	s.Leaving = nil
	if err := s.Verify(ctx, left); err != nil {
		t.Errorf("a stored object in a namespace the tenant has lost: %v", err)
	}
	if err := s.VerifyApply(ctx, left); !errors.As(err, &te) {
		t.Errorf("a rollback target into a namespace the tenant has lost: %v", err)
	}
	given := testRelease("kv", "ns-a", 1, release.StatusDeployed, "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: x\n  namespace: ns-b\n")
	if err := s.Verify(ctx, given); err != nil {
		t.Errorf("a stored object in a namespace made again for another tenant: %v", err)
	}
}
