package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// A release's webhook configurations are narrowed to its tenant
// (guard.NarrowWebhooks) whatever way they take into the cluster. The
// render guard narrows a rendered chart; but a rollback applies a stored
// manifest as it is, which an older controller may have rendered without
// today's narrowing (a tenant can force a failed upgrade to bring one
// back), a configuration an older controller installed stays until the
// release is upgraded, and a tenant that gains a namespace keeps the old
// list in its condition. So:
//   - every manifest Helm builds for a tenant's install, upgrade or
//     rollback has its webhook configurations narrowed as it is built
//     (narrowBuilt, from releaseKube.Build): what Helm creates or patches
//     is narrowed, whatever the revision;
//   - every reconcile of a release in sync or held reads its webhook
//     configurations and applies again, with the controller's rights
//     (Helm made them so: the actor holds nothing cluster-scoped), those
//     not narrowed as NarrowWebhooks would narrow them now
//     (keepWebhooksNarrowed). They are a few objects, read by name: the
//     controller neither lists nor watches webhook configurations.

// narrowBuilt narrows the webhook configurations among infos to
// namespaces; an empty namespaces leaves them as they are (an uninstall).
func narrowBuilt(infos kube.ResourceList, namespaces []string) {
	if len(namespaces) == 0 {
		return
	}
	for _, info := range infos {
		if u, ok := info.Object.(*unstructured.Unstructured); ok && guard.IsWebhookConfiguration(u.GroupVersionKind()) {
			guard.NarrowWebhooks(u, namespaces)
		}
	}
}

// keepWebhooksNarrowed applies again, narrowed to the tenant's namespaces,
// the webhook configurations of rel that are the release's (Helm's marks)
// and not narrowed as guard.NarrowWebhooks narrows now. One that is gone
// is left gone: it sees nothing. Re-applies back off as drift restores do.
func (c *Reconciler) keepWebhooksNarrowed(r *releaseRun, rel *release.Release, ns string) error {
	parsed := c.Drift.objects(rel, ns, r.t, r.labels, c.namespaced)
	if len(parsed.hooks) == 0 {
		return nil
	}
	now := time.Now()
	var errs []error
	var narrowed []string
	for _, o := range parsed.hooks {
		done, err := c.narrowWebhook(r.ctx, rel, ns, o, r.scope.Namespaces, now, r.requeue)
		if err != nil {
			errs = append(errs, err)
		}
		if done {
			narrowed = append(narrowed, o.Gvk.Kind+" "+o.Ref.Name)
		}
	}
	if len(narrowed) > 0 {
		sort.Strings(narrowed)
		c.event(r.t, "Warning", "DriftCorrected", "release %s: narrowed %s to the tenant's namespaces and requests again: it was not narrowed as the controller narrows webhooks now", rel.Name, strings.Join(narrowed, ", "))
	}
	return errors.Join(errs...)
}

// narrowWebhook applies o narrowed when its live object is the release's
// and not narrowed, and reports whether it did.
func (c *Reconciler) narrowWebhook(ctx context.Context, rel *release.Release, ns string, o driftObject, namespaces []string, now time.Time, requeue func(time.Duration)) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(o.Gvk)
	if err := c.Reader.Get(ctx, o.Ref, live); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("reading %s %s of release %s: %w", o.Gvk.Kind, o.Ref.Name, rel.Name, err)
	}
	if !ofRelease(live, rel.Name, ns) || guard.WebhooksNarrowed(live, namespaces) {
		return false, nil
	}
	key := o.key()
	if wait := c.Drift.restoreWait(key, now); wait > 0 {
		requeue(wait)
		return false, nil
	}
	obj, err := o.decode()
	if err != nil {
		return false, err
	}
	guard.NarrowWebhooks(obj, namespaces)
	if err := c.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(c.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("narrowing %s %s of release %s: %w", o.Gvk.Kind, o.Ref.Name, rel.Name, err)
	}
	c.Drift.restoredAt(key, now)
	driftCorrections.WithLabelValues(o.Gvk.Kind).Inc()
	return true, nil
}
