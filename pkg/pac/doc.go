// Package pac is the platform-as-code contract between the packager that
// writes it, the tenancy controller that sizes quotas from it and the
// validator that grades it: the annotation keys on CRDs, the ConfigMap
// they name, the units of every figure, and one writer and one reader.
//
// Figures are what one custom resource of a CRD runs. The writer is
// Figures.Annotations, the CRD's annotations (Prefix and a key, naming the
// ConfigMap ConfigMapName gives), and Figures.Data, that ConfigMap's data.
// The reader is Read, which follows a CRD's annotations to the ConfigMaps
// and returns its Figures, or an error naming the CRD and the key.
// ParseQuantity and BoundedQuantity bound a figure's text before it is
// parsed, so that untrusted text cannot stall a reader.
//
// Units: every resource figure is for one pod of a custom resource's
// operand; "replicas" says how many pods one custom resource runs, and
// "pvcs-per-replica" how many volumes of "storage-requests" each pod
// claims. A consumer multiplies: instances × replicas × figure. The
// informational keys (usage, PDB, security context, ServiceAccount) are
// shipped for people and tools; nothing enforces them.
//
// It depends only on the Kubernetes API types, so every producer and
// consumer can import it.
package pac
