package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/pkg/packaging"
)

// tools are the programs a run uses; platformChart is charts/opctl, which
// the live tenant step installs.
type tools struct{ opctl, helm3, helm4, platformChart string }

// step names the checks, in table order.
var steps = []string{"package", "lint3", "lint4", "names", "validate", "rerun", "dropped", "install"}

// result is one project's row: each step ok, FAIL or - (not run).
type result struct {
	objects    int
	incomplete string
	status     map[string]string
	warnings   int
	details    []string
	// check is opctl tenancy check's verdict on the main chart under the
	// shipped policy, offline: fits, or the reasons it would be refused.
	check string
	// tenant is what two Tenants running the main chart became on a live
	// platform (INSTALL=1): ready, a refusal class, or a failure
	// (tenantlive.go); nowebhook is the same with webhooks.enabled=false
	// for a chart with webhooks that was not ready, "" when not tried.
	tenant, nowebhook string
}

func (r *result) set(step string, err error) bool {
	if err == nil {
		r.status[step] = "ok"
		return true
	}
	r.status[step] = "FAIL"
	r.details = append(r.details, step+": "+oneLine(err.Error()))
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

func (r *result) failed() bool {
	for _, s := range r.status {
		if s == "FAIL" {
			return true
		}
	}
	return r.tenant != "" && r.tenant != classReady && !refused(r.tenant)
}

func (r *result) row(p project) string {
	cells := []string{p.ID(), fmt.Sprint(r.objects)}
	for _, s := range steps {
		v := r.status[s]
		if v == "" {
			v = "-"
		}
		cells = append(cells, v)
	}
	note := strings.Join(p.Classes, ",")
	if r.incomplete != "" {
		note = "input incomplete: " + oneLine(r.incomplete)
	}
	for _, v := range []string{r.check, r.tenant, r.nowebhook} {
		if v == "" {
			v = "-"
		}
		cells = append(cells, v)
	}
	cells = append(cells, fmt.Sprint(r.warnings), note)
	return strings.Join(cells, "\t")
}

// check runs every step on one project in dir.
func check(ctx context.Context, t tools, corpus, dir string, p project, doInstall bool) *result {
	r := &result{status: map[string]string{}}
	src := filepath.Join(dir, "src")
	projDir := filepath.Join(src, p.Subdir)
	overlay := filepath.Join(projDir, p.Overlay)
	ref, err := reference(corpus, p, src, overlay)
	if err != nil {
		if isIncomplete(err) {
			r.incomplete = err.Error()
			return r
		}
		r.incomplete = "kustomize build fails, so the rule does not apply: " + err.Error()
		return r
	}
	r.objects = len(ref)

	out := filepath.Join(dir, "out")
	res, err := opctlPackage(t.opctl, projDir, p.Overlay, out)
	if !r.set("package", err) {
		return r
	}
	r.warnings = len(res.Warnings)
	charts, bundles := res.charts(out), res.bundles(out)
	// The values the chart requires for the project's placeholders
	// (${VAR}, ko://), as a user installs it.
	set := res.requiredValues()
	r.set("lint3", lint(t.helm3, charts, set...))
	r.set("lint4", lint(t.helm4, charts, set...))

	rendered, err := template(t.helm3, release, "corpus", charts, set...)
	if r.set("names", err) {
		if bad := checkNames(rendered); len(bad) > 0 {
			r.set("names", fmt.Errorf("%d names over their limits: %s", len(bad), strings.Join(bad[:min(3, len(bad))], "; ")))
		}
		// Packaged means placeholders became values.
		if left := buildTimeRefs(rendered); len(left) > 0 {
			r.set("package", fmt.Errorf("the chart renders placeholders the project's release step fills (ko, envsubst, clusterctl): %s", strings.Join(left, ", ")))
		}
	}
	errs, err := validate(t.opctl, append(bundles, charts...), p.has("sdk-basecsv"))
	if err == nil && len(errs) > 0 {
		err = fmt.Errorf("%d errors: %s", len(errs), strings.Join(errs[:min(3, len(errs))], "; "))
	}
	r.set("validate", err)

	out2 := filepath.Join(dir, "out2")
	if _, err := opctlPackage(t.opctl, projDir, p.Overlay, out2); r.set("rerun", err) {
		r.set("rerun", sameTrees(out, out2))
	}
	r.set("dropped", checkDropped(t, ref, charts, bundles, res, set))
	if verdict, err := tenantCheck(t.opctl, charts); err != nil {
		r.details = append(r.details, "check: "+oneLine(err.Error()))
		r.check = "error"
	} else {
		r.check = verdict
	}
	if doInstall {
		r.set("install", install(ctx, t.helm3, charts, set...))
		var details []string
		r.tenant, r.nowebhook, details = liveTenant(ctx, t, dir, charts, set)
		for _, d := range details {
			r.details = append(r.details, "tenant: "+oneLine(d))
		}
	}
	_ = os.RemoveAll(dir)
	return r
}

// reference checks the project out and builds its overlay: first from
// the paths a package reads, then, if that fails, from the project's whole
// directory (an overlay may refer to files outside config/).
func reference(corpus string, p project, src, overlay string) ([]*unstructured.Unstructured, error) {
	gd, err := gitDir(corpus, p.Repo)
	if err != nil {
		return nil, err
	}
	if err := checkout(gd, p, src, false); err != nil {
		return nil, err
	}
	ref, err := kustomizeBuild(overlay)
	if err == nil {
		return ref, nil
	}
	if err := os.RemoveAll(src); err != nil {
		return nil, err
	}
	if err := checkout(gd, p, src, true); err != nil {
		return nil, err
	}
	ref, err = kustomizeBuild(overlay)
	if err != nil && remoteInput(err) {
		return nil, incomplete("remote input: %v", err)
	}
	return ref, err
}

// checkDropped renders the charts with a short release name, so that
// object names keep the overlay's, and with every optional part the chart
// has switched on (cert-manager, the helper roles), and lists what
// neither the chart nor the bundle carries.
func checkDropped(t tools, ref []*unstructured.Unstructured, charts, bundles []string, res *packageResult, required []string) error {
	var rendered []*unstructured.Unstructured
	for _, c := range charts {
		// The shortest names, so that none is cut to fit and hashed.
		base := append([]string{"fullnameOverride=r"}, required...)
		set := base
		for _, v := range []string{"certManager.enabled=true", "rbac.helpers.enabled=true"} {
			if hasValue(c, strings.SplitN(v, "=", 2)[0]) {
				set = append(set[:len(set):len(set)], v)
			}
		}
		for _, vals := range [][]string{base, set} {
			objs, err := template(t.helm3, "r", "n", []string{c}, vals...)
			if err != nil {
				return err
			}
			rendered = append(rendered, objs...)
		}
	}
	var b *bundle
	if len(bundles) == 1 {
		var err error
		if b, err = readBundle(bundles[0]); err != nil {
			return err
		}
	}
	chart, bndl := dropped(ref, rendered, b, res.NamePrefix, managerRBAC(ref, res.Manager), res.Warnings)
	var errs []error
	if len(chart) > 0 {
		errs = append(errs, fmt.Errorf("not in the chart: %s", strings.Join(chart, ", ")))
	}
	if len(bndl) > 0 {
		errs = append(errs, fmt.Errorf("not in the bundle: %s", strings.Join(bndl, ", ")))
	}
	return errors.Join(errs...)
}

// summary counts the rows.
type summary struct {
	total, incomplete, failed, passed int
	// check counts the packaged projects by the offline verdict's reasons.
	check map[string]int
	// tenant and nowebhook count the rows of the live tenant step by class.
	tenant, nowebhook map[string]int
	// fit counts the rows of the live step whose check finds the manager
	// reading a watch-namespace setting and its cluster-wide rules within
	// the baseline (neither allns, rules nor crd), and fitReady those ready.
	fit, fitReady int
}

func (s *summary) add(r *result) {
	s.total++
	if r.check != "" {
		count(&s.check, strings.Split(r.check, ",")...)
	}
	if r.tenant != "" {
		count(&s.tenant, r.tenant)
		if fitsBaseline(r.check) {
			s.fit++
			if r.tenant == classReady {
				s.fitReady++
			}
		}
	}
	if r.nowebhook != "" {
		count(&s.nowebhook, r.nowebhook)
	}
	switch {
	case r.incomplete != "":
		s.incomplete++
	case r.failed():
		s.failed++
	default:
		s.passed++
	}
}

// fitsBaseline reports whether an offline verdict finds the manager
// reading a watch-namespace setting, its rules within the shipped
// baseline (and admin in the tenant's namespaces) and no CRD converting
// through a webhook: what the issue asks to be Ready for two Tenants.
func fitsBaseline(check string) bool {
	reasons := strings.Split(check, ",")
	return check != "" && check != "error" && !slices.Contains(reasons, "allns") && !slices.Contains(reasons, "rules") && !slices.Contains(reasons, "crd")
}

func count(m *map[string]int, keys ...string) {
	if *m == nil {
		*m = map[string]int{}
	}
	for _, k := range keys {
		(*m)[k]++
	}
}

// counts lists m as "key n", sorted by key.
func counts(m map[string]int) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}

func (s summary) String(installed bool) string {
	checked := s.total - s.incomplete
	pct := 0.0
	if checked > 0 {
		pct = 100 * float64(s.passed) / float64(checked)
	}
	what := "every check"
	if !installed {
		what = "every check but install and tenant (INSTALL=1 adds them)"
	}
	line := fmt.Sprintf("corpus: %d projects: %d passed %s, %d failed, %d input incomplete (%.0f%% of the %d checked passed)", s.total, s.passed, what, s.failed, s.incomplete, pct, checked)
	if len(s.check) > 0 {
		line += "\ncorpus: check (opctl tenancy check --offline, shipped policy, before install; a project may have several reasons): " + counts(s.check)
	}
	if len(s.tenant) > 0 {
		rows, refusedRows := 0, 0
		for class, n := range s.tenant {
			rows += n
			if refused(class) {
				refusedRows += n
			}
		}
		line += fmt.Sprintf("\ncorpus: tenant (two Tenants on a live platform: charts/opctl's RBAC, shipped policy, the chart's defaults): %s: %d of %d rows ready, %d refused before install, %d neither; "+
			"%d of the %d rows whose check finds neither allns, rules nor crd ready",
			counts(s.tenant), s.tenant[classReady], rows, refusedRows, rows-s.tenant[classReady]-refusedRows, s.fitReady, s.fit)
	}
	if len(s.nowebhook) > 0 {
		line += "\ncorpus: nowebhook (the same with webhooks.enabled=false, charts with webhooks not ready with them): " + counts(s.nowebhook)
	}
	return line
}

// buildTimeRefs are what a release build of a project resolves, left in
// objects: ko:// image references and ${VAR} placeholders (envsubst,
// clusterctl) outside the CRDs, whose descriptions may show them as text,
// found as opctl package finds them.
func buildTimeRefs(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			continue
		}
		for _, m := range packaging.PlaceholdersIn(o.Object) {
			if !contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
