package registryv1

import (
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

func TestInstallModeFits(t *testing.T) {
	own := map[operatorsv1alpha1.InstallModeType]bool{operatorsv1alpha1.InstallModeTypeOwnNamespace: true}
	multi := map[operatorsv1alpha1.InstallModeType]bool{operatorsv1alpha1.InstallModeTypeOwnNamespace: true, operatorsv1alpha1.InstallModeTypeMultiNamespace: true}
	all := map[operatorsv1alpha1.InstallModeType]bool{operatorsv1alpha1.InstallModeTypeAllNamespaces: true}
	for _, tc := range []struct {
		name       string
		modes      map[operatorsv1alpha1.InstallModeType]bool
		namespaces int
		refused    string
	}{
		{"one namespace, OwnNamespace", own, 1, ""},
		{"two namespaces, no MultiNamespace", own, 2, "MultiNamespace"},
		{"two namespaces, MultiNamespace", multi, 2, ""},
		{"AllNamespaces only", all, 1, "OwnNamespace"},
	} {
		err := InstallModeFits("op.v1", tc.modes, tc.namespaces)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: %v, want a refusal naming %s", tc.name, err, tc.refused)
		}
	}
}
