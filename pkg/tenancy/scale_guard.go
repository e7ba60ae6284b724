package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationReleaseWorkloads lists, on a tenant namespace, the workloads
// of the tenant's releases there as resource/name, comma separated. The
// guardrail tenant-release-scale reads it: a scale request has no labels
// for tenant-managed-objects to see, so release workloads are guarded by
// name. Owners cannot change a Namespace.
const AnnotationReleaseWorkloads = "tenancy.opctl.dev/release-workloads"

// scaleResources are the kinds that scale through a subresource, with
// their resource names.
var scaleResources = map[schema.GroupKind]string{
	{Group: "apps", Kind: "Deployment"}:  "deployments",
	{Group: "apps", Kind: "StatefulSet"}: "statefulsets",
	{Group: "apps", Kind: "ReplicaSet"}:  "replicasets",
	{Kind: "ReplicationController"}:      "replicationcontrollers",
}

// guardScale keeps AnnotationReleaseWorkloads of each tenant namespace
// equal to the workloads of the tenant's deployed releases, read from
// the drift memo. While a release has not been seen deployed by this
// process (after a restart, while one installs or fails to), the guard
// only widens: the workloads of the others are added, none listed is
// dropped. An unchanged annotation costs no request.
func (c *Controller) guardScale(ctx context.Context, p *plan) error {
	t := p.tenant
	want := map[string][]string{}
	complete := true
	for _, op := range p.operators {
		if op.release == nil {
			continue
		}
		parsed, ok := c.drift.Release(op.release.Namespace + "/" + op.release.Name)
		if !ok {
			complete = false
			continue
		}
		for _, o := range parsed.Objs {
			if res, ok := scaleResources[o.Gvk.GroupKind()]; ok {
				want[o.Ref.Namespace] = append(want[o.Ref.Namespace], res+"/"+o.Ref.Name)
			}
		}
	}
	for _, name := range t.Spec.Namespaces {
		ns := &corev1.Namespace{}
		err := c.getOwned(ctx, client.ObjectKey{Name: name}, ns)
		if apierrors.IsNotFound(err) || (err == nil && (ns.Labels[tenancyv1.LabelTenant] != t.Name || ns.DeletionTimestamp != nil)) {
			continue // not made yet, not this tenant's, or going
		}
		if err != nil {
			return fmt.Errorf("namespace %s: %w", name, err)
		}
		list := want[name]
		if !complete && ns.Annotations[AnnotationReleaseWorkloads] != "" {
			// A release not seen deployed yet keeps what was listed.
			list = append(list, strings.Split(ns.Annotations[AnnotationReleaseWorkloads], ",")...)
		}
		slices.Sort(list)
		value := strings.Join(slices.Compact(list), ",")
		if ns.Annotations[AnnotationReleaseWorkloads] == value {
			continue
		}
		var set any // null removes the annotation
		if value != "" {
			set = value
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": ns.ResourceVersion,
			"annotations":     map[string]any{AnnotationReleaseWorkloads: set}}})
		if err != nil {
			return err
		}
		if err := c.client.Patch(ctx, ns, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldManager)); err != nil {
			return fmt.Errorf("listing the release workloads of namespace %s for the scale guardrail: %w", name, err)
		}
	}
	return nil
}
