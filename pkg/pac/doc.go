// Package pac is the platform-as-code contract between the packager that
// writes it, the tenancy controller that sizes quotas from it and the
// validator that grades it: the annotation keys on CRDs, the ConfigMap
// they name, the units of every figure, and one writer and one reader.
//
// Units: every resource figure is for one pod of a custom resource's
// operand; "replicas" says how many pods one custom resource runs, and
// "pvcs-per-replica" how many volumes of "storage-requests" each pod
// claims. A consumer multiplies: instances × replicas × figure.
//
// It depends only on the Kubernetes API types, so every producer and
// consumer can import it.
package pac
