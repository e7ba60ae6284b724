package pac

// Prefix starts every platform-as-code annotation on a CRD.
const Prefix = "platform-as-code/"

// The keys. Composition is the annotation's own value; every other
// annotation names the ConfigMap that holds the figure under the same key.
const (
	Composition       = "composition"
	Usage             = "usage"
	CPURequests       = "cpu-requests"
	CPULimits         = "cpu-limits"
	MemRequests       = "mem-requests"
	MemLimits         = "mem-limits"
	PDBMinAvailable   = "pdb-minavailable"
	PDBMaxUnavailable = "pdb-maxunavailable"
	SecurityContext   = "securitycontext"
	ServiceAccount    = "serviceaccount"

	// opctl's extensions, in the same ConfigMap (no annotation of their own).
	Replicas        = "replicas"
	StorageRequests = "storage-requests"
	PVCsPerReplica  = "pvcs-per-replica"
)

// AnnotatedKeys are the keys that have an annotation naming the ConfigMap,
// in the order the maturity guidelines list them.
var AnnotatedKeys = []string{Usage, CPURequests, CPULimits, MemRequests, MemLimits, PDBMinAvailable, PDBMaxUnavailable, SecurityContext, ServiceAccount}

// Informational keys are shipped for people and tools; the tenancy
// controller does not enforce them (the quota uses the resource figures
// only).
var Informational = []string{Usage, PDBMinAvailable, PDBMaxUnavailable, SecurityContext, ServiceAccount}

// ConfigMapName is the name of the ConfigMap that holds a CRD's figures.
func ConfigMapName(crd string) string { return crd + "-platform-as-code" }
