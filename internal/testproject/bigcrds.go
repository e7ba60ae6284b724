package testproject

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BigCRD is a CRD named <plural>.<group> of about size bytes whose field
// descriptions are random words, which compress about as well as real API
// documentation. The same arguments give the same bytes.
func BigCRD(plural, group string, size int) string {
	words := strings.Fields("the of a to replica volume storage field value name set when is not used by for this that pod node key secret spec status condition time count default limit request version resource object namespace label selector port image container policy backup restore schedule retention")
	r := rand.New(rand.NewPCG(1, uint64(len(plural))))
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s.%s\nspec:\n  group: %s\n  names:\n    kind: Big%s\n    listKind: Big%sList\n    plural: %s\n    singular: big%s\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n", plural, group, group, plural, plural, plural, plural)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "              field%d:\n                type: string\n                description: \"", i)
		for range 40 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\"\n")
	}
	return b.String()
}

// WithBigCRDs adds n CRDs of about size bytes each, under group, to the
// kustomize CRD directory of the project copy dir (config/crd), and
// returns their names.
func WithBigCRDs(t testing.TB, dir, group string, n, size int) []string {
	t.Helper()
	kust := filepath.Join(dir, "config", "crd", "kustomization.yaml")
	var names []string
	for i := range n {
		plural := fmt.Sprintf("bigs%c", 'a'+i)
		file := filepath.Join(dir, "config", "crd", "bases", plural+".yaml")
		if err := os.WriteFile(file, []byte(BigCRD(plural, group, size)), 0o644); err != nil {
			t.Fatal(err)
		}
		Edit(t, kust, func(s string) string {
			return strings.Replace(s, "resources:\n", "resources:\n- bases/"+plural+".yaml\n", 1)
		})
		names = append(names, plural+"."+group)
	}
	return names
}
