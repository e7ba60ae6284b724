package tenancy

import (
	"maps"
	"slices"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// A watch brings a reconcile only for a change the controller acts on:
// every create and delete, and an update that changes the metadata it
// acts on (labels, annotations, owner references, finalizers, generation,
// deletion) or the fields it reads. Status the controller never reads
// (the quota's usage, a catalog's connection state, timestamps) would
// otherwise let anything that moves it, such as an owner's writes counted
// by the quota, keep the controller busy for every tenant.

// quotaChanged: of the tenant's ResourceQuota the controller acts on its
// spec (restored when changed), status.hard, and whether the quota
// controller has counted every resource of the spec (quotaCounted: a
// kind's count appears in status.used once the quota controller watches
// it); not on the figures of status.used, which every object an owner
// creates or deletes moves. A change of usage alone reaches the Tenant's
// status through quotaUsage, bounded.
var quotaChanged = onChange(func(q *corev1.ResourceQuota) any {
	return []any{q.Spec, q.Status.Hard, quotaCounted(q)}
})

// namespaceChanged: of a tenant Namespace the controller acts on its
// metadata (the labels and annotations it sets, its deletion) and spec;
// its status (phase and conditions) follows the deletion.
var namespaceChanged = onChange(func(ns *corev1.Namespace) any { return ns.Spec })

// limitRangeChanged: of the tenant's LimitRange the controller acts on
// its spec, which it restores.
var limitRangeChanged = onChange(func(l *corev1.LimitRange) any { return l.Spec })

// networkPolicyChanged: of the tenant's NetworkPolicies the controller
// acts on their spec, which it restores.
var networkPolicyChanged = onChange(func(p *networkingv1.NetworkPolicy) any { return p.Spec })

// roleBindingChanged: of a RoleBinding the controller acts on its
// subjects and role (its own, restored; a release's, drift corrected).
var roleBindingChanged = releaseOnChange(func(b *rbacv1.RoleBinding) any { return []any{b.Subjects, b.RoleRef} })

// roleChanged: of a Role the controller acts on its rules (a release's,
// drift corrected).
var roleChanged = releaseOnChange(func(r *rbacv1.Role) any { return r.Rules })

// serviceAccountChanged: of a ServiceAccount the controller acts on its
// metadata and the fields a manifest sets (image pull secrets, token
// automount), not on the list of token Secrets.
var serviceAccountChanged = releaseOnChange(func(sa *corev1.ServiceAccount) any {
	return []any{sa.ImagePullSecrets, sa.AutomountServiceAccountToken}
})

// profileChanged: of a TenantProfile the controller acts on its spec and
// metadata; it has no status.
var profileChanged = onChange(func(p *tenancyv1.TenantProfile) any { return p.Spec })

// apiServerSliceChanged: of the API server's EndpointSlices (the only
// ones cached) the controller reads the addresses and TCP ports that go
// into every tenant's egress policy (apiServerEndpoints), not the
// endpoints' conditions.
var apiServerSliceChanged = onChange(func(s *discoveryv1.EndpointSlice) any {
	var addrs [][]string
	for _, ep := range s.Endpoints {
		addrs = append(addrs, ep.Addresses)
	}
	return []any{addrs, s.Ports}
})

// subscriptionChanged: of a Subscription the controller acts on its spec
// and where OLM is taking it (the current and installed CSV, the
// InstallPlan), not the catalog health and timestamps OLM refreshes.
var subscriptionChanged = onChange(func(s *operatorsv1alpha1.Subscription) any {
	st := s.Status
	return []any{s.Spec, st.CurrentCSV, st.InstalledCSV, st.InstallPlanRef, st.Install, st.State}
})

// installPlanChanged: of an InstallPlan the controller reads what
// slimInstallPlan keeps: its spec, phase and message.
var installPlanChanged = onChange(func(p *operatorsv1alpha1.InstallPlan) any {
	return []any{p.Spec, p.Status.Phase, p.Status.Message}
})

// csvChanged: of a CSV the controller reads what slimCSV keeps: its
// version, phase, reason and message, not OLM's timestamps.
var csvChanged = onChange(func(csv *operatorsv1alpha1.ClusterServiceVersion) any {
	return []any{csv.Spec.Version, csv.Status.Phase, csv.Status.Reason, csv.Status.Message}
})

// operatorGroupChanged: of the tenant's OperatorGroup the controller acts
// on its spec (restored) and the namespaces and ServiceAccount OLM
// resolved, not its lastUpdated time.
var operatorGroupChanged = onChange(func(g *operatorsv1.OperatorGroup) any {
	return []any{g.Spec, g.Status.Namespaces, g.Status.ServiceAccountRef}
})

// catalogSourceChanged: of the tenant's CatalogSource the controller acts
// on its spec (restored) and the registry address OLM serves it at, not
// the connection state OLM refreshes.
var catalogSourceChanged = onChange(func(cs *operatorsv1alpha1.CatalogSource) any {
	return []any{cs.Spec, cs.Status.RegistryServiceStatus}
})

// onChange passes every create, delete and generic event, and an update
// of an object of type T when its metadata the controller acts on or
// what read returns of it changed.
func onChange[T client.Object](read func(T) any) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok := e.ObjectOld.(T)
		new, ok2 := e.ObjectNew.(T)
		if !ok || !ok2 {
			return true
		}
		return metaChanged(old, new) || !equality.Semantic.DeepEqual(read(old), read(new))
	}}
}

// releaseOnChange is onChange for the kinds the cache slims (slimRelease):
// of an object Helm made, the cache keeps no annotations, rules, subjects
// or secrets, and drift correction compares the live object whenever its
// cached resourceVersion moves, so every write to it passes.
func releaseOnChange[T client.Object](read func(T) any) predicate.Predicate {
	p := onChange(read)
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if slimmedRelease(e.ObjectNew) || slimmedRelease(e.ObjectOld) {
			return e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
		}
		return p.Update(e)
	}}
}

// slimmedRelease reports whether slimRelease slims o: made by Helm, with
// no controller.
func slimmedRelease(o client.Object) bool {
	return o.GetLabels()[guard.HelmManagedBy] == "Helm" && metav1.GetControllerOf(o) == nil
}

// metaChanged reports whether the metadata the controller acts on
// differs between old and new.
func metaChanged(old, new client.Object) bool {
	return old.GetGeneration() != new.GetGeneration() ||
		!maps.Equal(old.GetLabels(), new.GetLabels()) ||
		!maps.Equal(old.GetAnnotations(), new.GetAnnotations()) ||
		!slices.Equal(old.GetFinalizers(), new.GetFinalizers()) ||
		!equality.Semantic.DeepEqual(old.GetOwnerReferences(), new.GetOwnerReferences()) ||
		!old.GetDeletionTimestamp().Equal(new.GetDeletionTimestamp())
}
