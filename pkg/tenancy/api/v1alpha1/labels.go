package v1alpha1

// Labels the controller sets and the guardrails read.
const (
	// LabelTenant marks objects of a tenant with its name.
	LabelTenant = "tenancy.opctl.dev/tenant"
	// LabelSharedCRD marks CRDs the controller installed for tenants.
	LabelSharedCRD = "tenancy.opctl.dev/shared-crd"
	// AnnotationActor, on a tenant namespace, is the exact user name of
	// the tenant's actor (system:serviceaccount:<controller namespace>:
	// opctl-tenant-<tenant>): the one identity besides the controller the
	// guardrails exempt there. Owners cannot change a Namespace, and a
	// ServiceAccount they make has their namespace in its name.
	AnnotationActor = "tenancy.opctl.dev/actor"
)

// OperatorGroupServiceAccount is the ServiceAccount of the OperatorGroup
// the controller makes in a tenant's first namespace: OLM installs the
// tenant's OLM operators as it.
const OperatorGroupServiceAccount = "tenant-operators"
