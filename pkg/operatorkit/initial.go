package operatorkit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// keepInitial sets the fields that obj, as InitialData filled it, sets
// to their values in live: once created, initial data never changes.
// FromCR runs afterwards, so what comes from the custom resource still
// wins. A field live lacks keeps obj's value; metadata is not data.
func keepInitial(obj, live client.Object) error {
	conv := runtime.DefaultUnstructuredConverter
	o, err := conv.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %s: %w", obj.GetName(), err)
	}
	l, err := conv.ToUnstructured(live)
	if err != nil {
		return fmt.Errorf("converting live %s: %w", obj.GetName(), err)
	}
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		delete(l, k)
	}
	overlayLive(o, l)
	if err := conv.FromUnstructured(o, obj); err != nil {
		return fmt.Errorf("converting %s back: %w", obj.GetName(), err)
	}
	return nil
}

// overlayLive walks the fields set in initial: a map is walked into, and
// any other value (a scalar or a list) is replaced by live's.
func overlayLive(initial, live map[string]any) {
	for k, iv := range initial {
		lv, ok := live[k]
		if !ok || isEmpty(lv) {
			continue
		}
		if im, isMap := iv.(map[string]any); isMap {
			if lm, ok := lv.(map[string]any); ok {
				overlayLive(im, lm)
			}
			continue
		}
		if !isEmpty(iv) {
			initial[k] = lv
		}
	}
}
