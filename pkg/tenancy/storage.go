package tenancy

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Labels on the release records the controller keeps in its own
// namespace: they say whose record it is, so that one tenant's release
// never reads another's history.
const (
	LabelRecordTenant    = "tenancy.opctl.dev/tenant"
	LabelRecordNamespace = "tenancy.opctl.dev/release-namespace"
)

// helmKeyPrefix starts the Secret name Helm gives a release record.
const helmKeyPrefix = "sh.helm.release.v1."

// recordName is the Secret name of a release record in the storage
// namespace: Helm's key with the tenant and the release namespace put in
// front of the release name, so that every tenant's releases of the same
// name live side by side.
func recordName(tenant, namespace, key string) string {
	return helmKeyPrefix + tenant + "." + namespace + "." + strings.TrimPrefix(key, helmKeyPrefix)
}

// tenantSecrets is the SecretInterface Helm's Secrets driver stores a
// tenant's releases through. Names are qualified by recordName, every
// list is narrowed by the record labels, and every write carries them.
// Records of other tenants are invisible, also when a name collides.
// Only the methods Helm's driver calls are overridden.
type tenantSecrets struct {
	typedcorev1.SecretInterface // of the storage namespace
	tenant, namespace           string
}

func (s *tenantSecrets) own(sec *corev1.Secret) bool {
	return sec.Labels[LabelRecordTenant] == s.tenant && sec.Labels[LabelRecordNamespace] == s.namespace
}

// unqualify returns the record as Helm named it, without our labels.
func (s *tenantSecrets) unqualify(sec *corev1.Secret) {
	sec.Name = helmKeyPrefix + strings.TrimPrefix(sec.Name, recordName(s.tenant, s.namespace, ""))
	delete(sec.Labels, LabelRecordTenant)
	delete(sec.Labels, LabelRecordNamespace)
}

func (s *tenantSecrets) qualify(sec *corev1.Secret) *corev1.Secret {
	sec = sec.DeepCopy()
	sec.Name = recordName(s.tenant, s.namespace, sec.Name)
	sec.Namespace = ""
	if sec.Labels == nil {
		sec.Labels = map[string]string{}
	}
	sec.Labels[LabelRecordTenant] = s.tenant
	sec.Labels[LabelRecordNamespace] = s.namespace
	return sec
}

func (s *tenantSecrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	sec, err := s.SecretInterface.Get(ctx, recordName(s.tenant, s.namespace, name), opts)
	if err != nil {
		return nil, err
	}
	if !s.own(sec) {
		return nil, fmt.Errorf("release record %s/%s belongs to tenant %q namespace %q, not %s/%s: refusing to read it",
			sec.Namespace, sec.Name, sec.Labels[LabelRecordTenant], sec.Labels[LabelRecordNamespace], s.tenant, s.namespace)
	}
	s.unqualify(sec)
	return sec, nil
}

func (s *tenantSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{LabelRecordTenant: s.tenant, LabelRecordNamespace: s.namespace} {
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, fmt.Errorf("release records of %s/%s: %w", s.tenant, s.namespace, err)
		}
		sel = sel.Add(*r)
	}
	opts.LabelSelector = sel.String()
	list, err := s.SecretInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		s.unqualify(&list.Items[i])
	}
	return list, nil
}

func (s *tenantSecrets) Create(ctx context.Context, sec *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	return s.SecretInterface.Create(ctx, s.qualify(sec), opts)
}

func (s *tenantSecrets) Update(ctx context.Context, sec *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	return s.SecretInterface.Update(ctx, s.qualify(sec), opts)
}

// Delete deletes a record; Helm's driver has read it through Get first,
// which checked that it is this tenant's.
func (s *tenantSecrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return s.SecretInterface.Delete(ctx, recordName(s.tenant, s.namespace, name), opts)
}
