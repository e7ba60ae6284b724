package pac

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Figures are what one custom resource of a CRD runs. Requests, Limits
// and Storage are per pod (one replica); Replicas is the pods per custom
// resource.
type Figures struct {
	Usage string
	// Replicas of the operand per custom resource (at least 1).
	Replicas int64
	// Requests and Limits of one pod: cpu and memory.
	Requests, Limits corev1.ResourceList
	// Storage of one volume; PVCsPerReplica volumes per pod.
	Storage        *resource.Quantity
	PVCsPerReplica int64
	// PDB, security context (JSON) and ServiceAccount are informational.
	PDBMinAvailable, PDBMaxUnavailable string
	SecurityContext, ServiceAccount    string
}

// resourceKeys map figure keys to resource names.
var resourceKeys = []struct {
	key    string
	name   corev1.ResourceName
	limits bool
}{
	{CPURequests, corev1.ResourceCPU, false},
	{MemRequests, corev1.ResourceMemory, false},
	{CPULimits, corev1.ResourceCPU, true},
	{MemLimits, corev1.ResourceMemory, true},
}

// Data is the ConfigMap data that carries f: the writer.
func (f Figures) Data() map[string]string {
	d := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			d[k] = v
		}
	}
	put(Usage, f.Usage)
	for _, r := range resourceKeys {
		src := f.Requests
		if r.limits {
			src = f.Limits
		}
		if q, ok := src[r.name]; ok {
			put(r.key, q.String())
		}
	}
	if f.Storage != nil {
		put(StorageRequests, f.Storage.String())
		put(PVCsPerReplica, strconv.FormatInt(max(f.PVCsPerReplica, 1), 10))
	}
	put(PDBMinAvailable, f.PDBMinAvailable)
	put(PDBMaxUnavailable, f.PDBMaxUnavailable)
	put(SecurityContext, f.SecurityContext)
	put(ServiceAccount, f.ServiceAccount)
	if len(d) > 0 {
		d[Replicas] = strconv.FormatInt(max(f.Replicas, 1), 10)
	}
	return d
}

// Annotations are the CRD annotations for figures stored in configMap,
// plus composition when given.
func (f Figures) Annotations(configMap, composition string) map[string]string {
	a := map[string]string{}
	data := f.Data()
	for _, k := range AnnotatedKeys {
		if _, ok := data[k]; ok {
			a[Prefix+k] = configMap
		}
	}
	if composition != "" {
		a[Prefix+Composition] = composition
	}
	return a
}

// Read returns the figures a CRD's annotations point to, from the
// ConfigMaps by name: the reader. ok is false when the CRD carries no
// resource figure. An annotation naming a missing ConfigMap, or a figure
// that does not parse, is an error naming the CRD and the key.
func Read(crd string, annotations map[string]string, configMaps map[string]map[string]string) (f Figures, ok bool, err error) {
	f = Figures{Replicas: 1, Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	var home map[string]string // the ConfigMap of the resource figures
	figure := func(key string) (string, bool, error) {
		cm, ok := annotations[Prefix+key]
		if !ok {
			return "", false, nil
		}
		data, ok := configMaps[cm]
		if !ok {
			return "", false, fmt.Errorf("CRD %s: annotation %s%s names ConfigMap %s, which is not shipped", crd, Prefix, key, cm)
		}
		v, ok := data[key]
		return v, ok, nil
	}
	for _, r := range resourceKeys {
		v, found, err := figure(r.key)
		if err != nil {
			return f, false, err
		}
		if !found {
			continue
		}
		q, err := quantity(crd, r.key, v)
		if err != nil {
			return f, false, err
		}
		dst := f.Requests
		if r.limits {
			dst = f.Limits
		}
		dst[r.name] = q
		ok = true
		if home == nil {
			home = configMaps[annotations[Prefix+r.key]]
		}
	}
	for key, dst := range map[string]*string{Usage: &f.Usage, PDBMinAvailable: &f.PDBMinAvailable, PDBMaxUnavailable: &f.PDBMaxUnavailable,
		SecurityContext: &f.SecurityContext, ServiceAccount: &f.ServiceAccount} {
		if *dst, _, err = figure(key); err != nil {
			return f, false, err
		}
	}
	count := func(key string) (int64, bool, error) {
		v, found := home[key]
		if !found {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("CRD %s: platform-as-code %s %q is not a count", crd, key, v)
		}
		return n, true, nil
	}
	if n, found, err := count(Replicas); err != nil {
		return f, false, err
	} else if found {
		f.Replicas = n
	}
	if v, found := home[StorageRequests]; found {
		q, err := quantity(crd, StorageRequests, v)
		if err != nil {
			return f, false, err
		}
		f.Storage, f.PVCsPerReplica = &q, 1
		if n, found, err := count(PVCsPerReplica); err != nil {
			return f, false, err
		} else if found && n == 0 {
			return f, false, fmt.Errorf("CRD %s: platform-as-code %s is 0 while %s is set: give at least 1, or drop %s", crd, PVCsPerReplica, StorageRequests, StorageRequests)
		} else if found {
			f.PVCsPerReplica = n
		}
	}
	return f, ok, nil
}

// Bounds on a figure's text.
const (
	maxQuantityLen = 64
	maxExponent    = 99
)

// quantity parses a figure of a CRD's key.
func quantity(crd, key, v string) (resource.Quantity, error) {
	q, err := ParseQuantity(v)
	if err != nil {
		return q, fmt.Errorf("CRD %s: platform-as-code %s %q: %w", crd, key, v, err)
	}
	return q, nil
}

// ParseQuantity parses a resource figure: a Kubernetes quantity that is
// not negative. Its text is bounded first, because apimachinery takes
// minutes to parse "1e-99999999" and a figure must not stall a reader.
func ParseQuantity(v string) (resource.Quantity, error) {
	if err := BoundedQuantity(v); err != nil {
		return resource.Quantity{}, err
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return q, fmt.Errorf("not a quantity (like 100m or 128Mi): %w", err)
	}
	if q.Sign() < 0 {
		return q, fmt.Errorf("is negative")
	}
	// What is stored is the canonical form; it must be the same amount
	// (apimachinery writes "1000E" as "1").
	if back, err := resource.ParseQuantity(q.String()); err != nil || back.Cmp(q) != 0 {
		return q, fmt.Errorf("does not survive Kubernetes' canonical form (%s): write the amount plainly, like 1000Pi or 500m", q.String())
	}
	return q, nil
}

// BoundedQuantity refuses quantity text that apimachinery would take too
// long to parse: over maxQuantityLen characters, or a decimal exponent
// beyond ±maxExponent. Check text from an untrusted source with it before
// decoding it into a Quantity.
func BoundedQuantity(v string) error {
	if len(v) > maxQuantityLen || hugeExponent(v) {
		return fmt.Errorf("not a plain quantity: use at most %d characters and a decimal exponent within ±%d", maxQuantityLen, maxExponent)
	}
	return nil
}

// hugeExponent reports whether v has a decimal exponent (e or E, an
// optional sign) of more than two digits.
func hugeExponent(v string) bool {
	i := strings.IndexAny(v, "eE")
	if i < 0 {
		return false
	}
	digits := strings.TrimLeft(v[i+1:], "+-")
	n := 0
	for n < len(digits) && digits[n] >= '0' && digits[n] <= '9' {
		n++
	}
	return n > 2
}
