package tenancy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// storedObjects lists the objects of a shared CRD that the skew guard
// checks a new definition against (guard.StoredObjectsFit), without a
// right the controller does not hold: with its own client where the
// platform granted it list on the kind, else in each tenant's namespaces
// as that tenant's actor, which holds the operators' kinds there
// (tenant-kinds). A tenant whose actor may not list the kind has no
// operator of it and no object of it to lose. Objects outside tenant
// namespaces are seen only with the platform's grant.
type storedObjects struct {
	own    client.Reader // the controller's live reader
	actors func(tenant string) (client.Client, error)
}

func (c *Controller) storedObjects() storedObjects {
	return storedObjects{own: c.reader, actors: c.actorClient}
}

// Get is not used by the skew guard.
func (s storedObjects) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("storedObjects lists only")
}

// List fills list, an UnstructuredList, with every object it can read,
// in one page: the guard pages through its continue token, which is
// empty.
func (s storedObjects) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	ul, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return fmt.Errorf("storedObjects lists unstructured objects, not %T", list)
	}
	if err := s.own.List(ctx, ul, opts...); !apierrors.IsForbidden(err) {
		return err
	}
	var tenants tenancyv1.TenantList
	if err := s.own.List(ctx, &tenants); err != nil {
		return fmt.Errorf("listing the Tenants whose objects to check: %w", err)
	}
	var items []unstructured.Unstructured
	for _, t := range tenants.Items {
		actor, err := s.actors(t.Name)
		if err != nil {
			return err
		}
		for _, ns := range t.Spec.Namespaces {
			for cont := ""; ; {
				page := &unstructured.UnstructuredList{}
				page.SetGroupVersionKind(ul.GroupVersionKind())
				o := []client.ListOption{client.InNamespace(ns), client.Limit(250)}
				if cont != "" {
					o = append(o, client.Continue(cont))
				}
				err := actor.List(ctx, page, o...)
				if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
					break
				} else if err != nil {
					return fmt.Errorf("listing %s in %s as tenant %s's actor: %w", ul.GetKind(), ns, t.Name, err)
				}
				items = append(items, page.Items...)
				if cont = page.GetContinue(); cont == "" {
					break
				}
			}
		}
	}
	ul.Items = items
	ul.SetContinue("")
	return nil
}
