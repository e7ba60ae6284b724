package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeBuild is the reference: the overlay built by krusty with
// default options, as `kustomize build` does.
func kustomizeBuild(dir string) ([]*unstructured.Unstructured, error) {
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	y, err := rm.AsYaml()
	if err != nil {
		return nil, err
	}
	return decodeAll(y)
}

// remoteInput reports a kustomize error that comes from input the corpus
// cannot hold offline: a remote base or a Helm chart.
func remoteInput(err error) bool {
	s := err.Error()
	for _, m := range []string{"git cloner", "http://", "https://", "github.com/", "helmCharts", "helm chart", "no 'helm' program"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func decodeAll(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// run runs a program and returns its output, and an error holding the
// last lines of its output when it fails.
func run(name string, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, tail(out.String(), 6))
	}
	return out.Bytes(), nil
}

func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, "# Warning: ") { // kustomize's deprecation notes
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// packageResult is what `opctl package -o json` prints.
type packageResult struct {
	Name       string   `json:"name"`
	Manager    string   `json:"manager"`
	NamePrefix string   `json:"namePrefix"`
	Roots      []string `json:"roots"`
	Warnings   []string `json:"warnings"`
	// Placeholders and KoImages are what the chart requires as values.
	Placeholders []struct {
		Var      string `json:"var"`
		Required bool   `json:"required"`
	} `json:"placeholders"`
	KoImages []struct {
		Name string `json:"name"`
	} `json:"koImages"`
}

// requiredValues sets what the chart requires for the project's
// placeholders: placeholders.VAR without a default, and every ko image.
// The stand-ins are DNS labels that are also base64 (a Secret's data, as
// cluster-api-provider-aws's AWS_B64ENCODED_CREDENTIALS fills) and an
// image reference, as the names, namespaces, data and images they fill
// want.
func (r *packageResult) requiredValues() []string {
	var set []string
	for _, ph := range r.Placeholders {
		if ph.Required {
			set = append(set, "placeholders."+ph.Var+"=corpus00")
		}
	}
	for _, k := range r.KoImages {
		set = append(set, "images."+k.Name+"=registry.invalid/corpus/"+k.Name+":v0")
	}
	return set
}

// valuesOf keeps the --set values the chart has: a chart's schema refuses
// unknown values, and a CRD chart has no placeholders.
func valuesOf(chart string, set []string) []string {
	var out []string
	for _, s := range set {
		if hasValue(chart, strings.SplitN(s, "=", 2)[0]) {
			out = append(out, s)
		}
	}
	return out
}

func opctlPackage(opctl, dir, overlay, out string) (*packageResult, error) {
	b, err := run(opctl, "package", dir, "--overlay", overlay, "--out", out, "-o", "json")
	if err != nil {
		return nil, err
	}
	i := bytes.IndexByte(b, '{')
	if i < 0 {
		return nil, fmt.Errorf("opctl package printed no JSON: %s", tail(string(b), 4))
	}
	res := &packageResult{}
	if err := json.NewDecoder(bytes.NewReader(b[i:])).Decode(res); err != nil {
		return nil, fmt.Errorf("opctl package output: %w", err)
	}
	return res, nil
}

// charts and bundles are the roots the package wrote.
func (r *packageResult) charts(out string) []string { return r.rootsUnder(out, "charts/") }
func (r *packageResult) bundles(out string) []string {
	return r.rootsUnder(out, "bundle/")
}

func (r *packageResult) rootsUnder(out, prefix string) []string {
	var dirs []string
	for _, root := range r.Roots {
		if strings.HasPrefix(root, prefix) {
			dirs = append(dirs, filepath.Join(out, root))
		}
	}
	return dirs
}

// lint runs helm lint --strict on every chart, with those of the given
// values it has.
func lint(helm string, charts []string, set ...string) error {
	var errs []error
	for _, c := range charts {
		args := []string{"lint", "--strict", c}
		for _, s := range valuesOf(c, set) {
			args = append(args, "--set", s)
		}
		if hasValue(c, "conversion.release") { // a CRD chart of converted CRDs names the release
			args = append(args, "--set", "conversion.release=first")
		}
		if _, err := run(helm, args...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// template renders every chart with a release name of 53 characters, the
// longest Helm allows, and those of the given values it has.
func template(helm, release, namespace string, charts []string, set ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, c := range charts {
		// The monitoring API, as the test control plane and most clusters
		// that run operators serve it: the chart renders ServiceMonitors
		// only where it is.
		args := []string{"template", release, c, "--namespace", namespace, "--include-crds", "--api-versions", "monitoring.coreos.com/v1"}
		for _, s := range valuesOf(c, set) {
			args = append(args, "--set", s)
		}
		if hasValue(c, "conversion.release") { // a CRD chart of converted CRDs names the release
			args = append(args, "--set", "conversion.release="+release)
		}
		b, err := run(helm, args...)
		if err != nil {
			return nil, err
		}
		docs, err := decodeAll(b)
		if err != nil {
			return nil, fmt.Errorf("helm template %s: %w", c, err)
		}
		objs = append(objs, docs...)
	}
	return objs, nil
}

// validateReport is the part of `opctl validate -o json` the corpus reads.
type validateReport struct {
	Reports []struct {
		Path     string `json:"path"`
		Findings []struct {
			Check    string `json:"check"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Source   string `json:"source"`
		} `json:"findings"`
	} `json:"reports"`
}

// validate runs opctl validate on the bundle and the charts and returns
// the errors it reports. With a base CSV the OperatorHub suite runs too:
// the project can then have the metadata it checks.
func validate(opctl string, paths []string, operatorHub bool) ([]string, error) {
	args := append([]string{"validate"}, paths...)
	args = append(args, "-o", "json")
	if operatorHub {
		args = append(args, "--suite", "operatorhub")
	}
	b, err := run(opctl, args...)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return nil, err
	}
	var rep validateReport
	if err := json.Unmarshal(b[bytes.IndexByte(b, '{'):], &rep); err != nil {
		return nil, fmt.Errorf("opctl validate output: %w", err)
	}
	var errs []string
	for _, r := range rep.Reports {
		for _, f := range r.Findings {
			if f.Severity == "error" && !policyChecks[f.Check] {
				errs = append(errs, fmt.Sprintf("%s %s: %s", filepath.Base(r.Path), f.Check, f.Message))
			}
		}
	}
	return errs, nil
}

// policyChecks are opctl validate's judgements of the project's own
// choices (host access, unpinned images, wildcard rules the project asks
// for), not of whether the package is right; the corpus does not count
// them against opctl (see docs/checks.md).
var policyChecks = map[string]bool{"OPC-C004": true, "OPC-C005": true, "OPC-C007": true}

// sameTrees compares two output folders byte for byte.
func sameTrees(a, b string) error {
	files := func(root string) (map[string][]byte, error) {
		m := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			m[rel], err = os.ReadFile(p)
			return err
		})
		return m, err
	}
	fa, err := files(a)
	if err != nil {
		return err
	}
	fb, err := files(b)
	if err != nil {
		return err
	}
	var diff []string
	for k, v := range fa {
		if w, ok := fb[k]; !ok || !bytes.Equal(v, w) {
			diff = append(diff, k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			diff = append(diff, k)
		}
	}
	if len(diff) > 0 {
		slices.Sort(diff)
		return fmt.Errorf("a second run differs in %d files: %s", len(diff), strings.Join(diff[:min(len(diff), 5)], ", "))
	}
	return nil
}
