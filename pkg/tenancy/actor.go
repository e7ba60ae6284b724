package tenancy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/baseline"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// The actor is the identity every Helm action and drift correction of a
// tenant's releases runs as: a ServiceAccount in the controller's
// namespace, where no tenant can mint its tokens, bound only in the
// tenant's namespaces (actorObjects). What a release puts in a tenant
// namespace is then limited by the API server to what the tenant itself
// holds there, whatever a chart, hook or record says; cluster-scoped
// objects, which the grant policy checks, are the controller's own
// (releaseKube.Build).
const (
	actorPrefix = "opctl-tenant-"
	// ActorRole is the Role and RoleBinding in each tenant namespace that
	// give the actor the guardrails' bypass there; ActorAdminBinding binds
	// it admin, as the owners.
	ActorRole         = "tenant-actor"
	ActorAdminBinding = "tenant-actor-admin"
	actorRoleBinding  = "tenant-actor-role-"
	// KindsRole grants the actor and the owners the operators' own kinds.
	// It is the one Role the controller may write with rules it does not
	// hold (escalate by this name, config/rbac).
	KindsRole = "tenant-kinds"
)

// ActorName is the name of tenant's actor ServiceAccount.
func ActorName(tenant string) string {
	name := actorPrefix + tenant
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(tenant))
	return name[:253-17] + "-" + hex.EncodeToString(sum[:8])
}

// actorConfig is cfg impersonating tenant's actor in namespace ns.
func actorConfig(cfg *rest.Config, ns, tenant string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceaccount.MakeUsername(ns, ActorName(tenant))}
	return cfg
}

// actorUser is the user name of tenant's actor, as the API server and
// the guardrails see it.
func (c *Controller) actorUser(tenant string) string {
	return serviceaccount.MakeUsername(c.opts.StorageNamespace, ActorName(tenant))
}

// guardrailBypass is the rule the guardrail policies let through
// (config/guardrails): held by the actor in its tenant's namespaces only.
var guardrailBypass = rbacv1.PolicyRule{APIGroups: []string{tenancyv1.GroupVersion.Group}, Resources: []string{"guardrails"}, Verbs: []string{"bypass"}}

// actorKinds are the shipped baseline's namespaced rules
// (baseline.NamespacedRules) and rules on the namespaced CRDs of the
// tenant's operators
// that are shared (isShared): the controller, or OLM for a tenant,
// installed them. A CRD of another installer, even one identical to the
// operator's, stays out (its schema is public: a copy proves nothing),
// and a CRD not installed yet comes in once ensureCRDs has (applyKinds).
func (c *Controller) actorKinds(ctx context.Context, reader client.Reader, p *plan) ([]rbacv1.PolicyRule, error) {
	if p == nil {
		return nil, nil
	}
	byGroup := map[string][]string{}
	for _, op := range p.operators {
		if op.analysis == nil {
			continue
		}
		own, err := guard.OwnKinds(ctx, reader, op.analysis.CRDs)
		if err != nil {
			return nil, err
		}
		for _, crd := range op.analysis.CRDs {
			if !slices.Contains(own, crd.Name) {
				continue
			}
			plural := crd.Spec.Names.Plural
			for _, r := range []string{plural, plural + "/status", plural + "/finalizers"} {
				if !slices.Contains(byGroup[crd.Spec.Group], r) {
					byGroup[crd.Spec.Group] = append(byGroup[crd.Spec.Group], r)
				}
			}
		}
	}
	rules := slices.Clone(baseline.NamespacedRules)
	for _, g := range slices.Sorted(maps.Keys(byGroup)) {
		res := slices.Clone(byGroup[g])
		slices.Sort(res)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: baseline.OwnKindVerbs})
	}
	return rules, nil
}

// applyKinds writes the tenant-kinds Roles again once ensureCRDs has
// installed CRDs in this reconcile, before a release needs them: Build
// ran before the CRDs existed.
func (c *Controller) applyKinds(ctx context.Context, p *plan) error {
	kinds, err := c.actorKinds(ctx, c.reader, p) // live: the cache may not have the new CRDs yet
	if err != nil {
		return err
	}
	for _, o := range actorObjects(p.tenant, p.settings, c.opts.StorageNamespace, kinds) {
		role, ok := o.(*rbacv1.Role)
		if !ok || role.Name != KindsRole {
			continue
		}
		role.TypeMeta = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}
		// Owned as operatorkit owns what Build returns, which it may not
		// have applied yet in this reconcile.
		if err := controllerutil.SetControllerReference(p.tenant, role, c.client.Scheme()); err != nil {
			return err
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(role)
		if err != nil {
			return err
		}
		if err := c.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u}), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("granting the operators' kinds in %s: %w", role.Namespace, err)
		}
	}
	return nil
}

// actorObjects are tenant t's actor and its rights: in each tenant
// namespace what the owners hold (admin), the guardrails' bypass, the
// operators' own kinds (which the owners hold too) and the platform's
// named ClusterRoles. Nothing outside the tenant's namespaces.
func actorObjects(t *tenancyv1.Tenant, s settings, storage string, kinds []rbacv1.PolicyRule) []client.Object {
	labels := s.ownedLabels(t.Name)
	name := ActorName(t.Name)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: storage}}
	objs := []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: storage, Labels: labels}}}
	for _, ns := range t.Spec.Namespaces {
		meta := func(name string) metav1.ObjectMeta {
			return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}
		}
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: meta(ActorRole), Rules: []rbacv1.PolicyRule{guardrailBypass}},
			&rbacv1.RoleBinding{ObjectMeta: meta(ActorRole), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ActorRole}},
			&rbacv1.Role{ObjectMeta: meta(KindsRole), Rules: slices.Clone(kinds)},
			&rbacv1.RoleBinding{ObjectMeta: meta(KindsRole), Subjects: append(slices.Clone(subject), t.Spec.Owners...),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: KindsRole}},
			&rbacv1.RoleBinding{ObjectMeta: meta(ActorAdminBinding), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: policy.OwnerRole}})
		for _, role := range sortedUnique(s.ClusterRoles) {
			objs = append(objs, &rbacv1.RoleBinding{ObjectMeta: meta(actorRoleBinding + role), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}})
		}
	}
	return objs
}

// sortedUnique returns the distinct strings of in, sorted.
func sortedUnique(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// actorClient is a client acting as tenant's actor.
func (c *Controller) actorClient(tenant string) (client.Client, error) {
	cl, err := client.New(actorConfig(c.config, c.opts.StorageNamespace, tenant), client.Options{Scheme: c.client.Scheme(), Mapper: c.client.RESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("client of tenant %s's actor: %w", tenant, err)
	}
	return cl, nil
}

// ensureActor creates tenant t's actor and its bindings where they are
// missing, before the finalizer acts as it: a Tenant deleted before the
// controller first reconciled it with an actor (an upgrade) has none, and
// a foreground deletion collects the Tenant's dependents first. What
// exists is left as it is.
func (c *Controller) ensureActor(ctx context.Context, t *tenancyv1.Tenant) error {
	for _, o := range actorObjects(t, c.deletionSettings(t), c.opts.StorageNamespace, nil) {
		// Not owned by the Tenant: a foreground deletion would collect
		// them before the finalizer is done; removeActor deletes them.
		err := c.client.Create(ctx, o, client.FieldOwner(FieldManager))
		// A namespace already gone or going holds nothing to act on.
		gone := apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
		if err != nil && !apierrors.IsAlreadyExists(err) && !gone {
			return fmt.Errorf("creating %T %s/%s of tenant %s's actor: %w", o, o.GetNamespace(), o.GetName(), t.Name, err)
		}
	}
	return nil
}

// isActor reports whether o is one of tenant t's actor objects other
// than the kinds Role and its binding, which the owners hold too.
func (c *Controller) isActor(t *tenancyv1.Tenant, o client.Object) bool {
	switch o.(type) {
	case *corev1.ServiceAccount:
		return o.GetNamespace() == c.opts.StorageNamespace && o.GetName() == ActorName(t.Name)
	case *rbacv1.Role:
		return o.GetName() == ActorRole
	case *rbacv1.RoleBinding:
		n := o.GetName()
		return n == ActorRole || n == ActorAdminBinding || strings.HasPrefix(n, actorRoleBinding)
	}
	return false
}

// removeActor deletes tenant t's actor once the finalizer no longer acts
// as it: the ServiceAccount and its rights in every namespace, and with
// kinds the tenant-kinds Role and binding too (the owners keep those when
// the Tenant is orphaned).
func (c *Controller) removeActor(ctx context.Context, t *tenancyv1.Tenant, kinds bool) error {
	for _, o := range actorObjects(t, c.deletionSettings(t), c.opts.StorageNamespace, nil) {
		if !kinds && !c.isActor(t, o) {
			continue
		}
		if err := c.client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s/%s of tenant %s's actor: %w", o.GetNamespace(), o.GetName(), t.Name, err)
		}
	}
	return nil
}
