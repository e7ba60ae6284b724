package packaging

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
)

// crdTexts renders every CRD once, with its platform-as-code annotations,
// as the YAML that the bundle ships and the chart templates: the largest
// part of most packages, so it is shared and done on every core.
func (p *Project) crdTexts(pacs []PlatformAsCode) (map[string][]byte, error) {
	out := make([][]byte, len(p.CRDs))
	errs := make([]error, len(p.CRDs))
	parallel(len(p.CRDs), func(i int) {
		m, err := crdMap(p.crdWithPAC(p.CRDs[i], pacs))
		if err == nil {
			// The map holds JSON's types only (ToUnstructured): YAML of
			// it directly is what sigs.k8s.io/yaml would write through
			// JSON, without the round trip.
			out[i], err = yamlv2.Marshal(m)
		}
		errs[i] = err
	})
	texts := map[string][]byte{}
	for i, c := range p.CRDs {
		if errs[i] != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s: %w", c.Name, errs[i])
		}
		texts[c.Name] = out[i]
	}
	return texts, nil
}

// parallel calls f(0..n-1) on as many goroutines as there are cores.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// keepAnnotation keeps the CRD, and so every custom resource, on
// uninstall with crds.keep.
const keepAnnotation = "    {{- if .Values.crds.keep }}\n    helm.sh/resource-policy: keep\n    {{- end }}\n"

// crdInstallCondition begins a CRD template: crds.install turns it off.
const crdInstallCondition = "{{- if .Values.crds.install }}\n"

// crdTemplateText gates a rendered CRD on crds.install and adds the
// crds.keep annotation, escaping template delimiters that are data.
func crdTemplateText(text []byte) (string, error) {
	s := escapeActions.Replace(string(text))
	head, rest, ok := strings.Cut(s, "\nmetadata:\n")
	if !ok {
		return "", fmt.Errorf("rendered CRD has no metadata")
	}
	if after, ok := strings.CutPrefix(rest, "  annotations:\n"); ok {
		rest = "  annotations:\n" + keepAnnotation + after
	} else {
		rest = "  annotations:\n" + keepAnnotation + rest
	}
	return crdInstallCondition + head + "\nmetadata:\n" + rest + "{{- end }}\n", nil
}
