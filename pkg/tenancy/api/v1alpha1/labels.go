package v1alpha1

// Labels the controller sets and the guardrails read.
const (
	// LabelTenant marks objects of a tenant with its name.
	LabelTenant = "tenancy.opctl.dev/tenant"
	// LabelSharedCRD marks CRDs the controller installed for tenants.
	LabelSharedCRD = "tenancy.opctl.dev/shared-crd"
)
