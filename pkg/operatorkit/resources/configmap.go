package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ConfigHashAnnotation, set on a pod template to ConfigMapHash of the
// configuration its pods read, rolls the pods when the configuration
// changes.
const ConfigHashAnnotation = "operatorkit.opctl.dev/config-hash"

// ConfigMapHash is a sha256 over cm's data and binary data, independent
// of map order.
func ConfigMapHash(cm *corev1.ConfigMap) string {
	h := sha256.New()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range sets.KeySet(cm.Data).Union(sets.KeySet(cm.BinaryData)) {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(cm.Data[k]))
		h.Write([]byte{0})
		h.Write(cm.BinaryData[k])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
