package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/strvals"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// tenantTimeout bounds the wait for a project's two Tenants to be Ready
// or refused, from their creation (the controller starts meanwhile).
const tenantTimeout = 3 * time.Minute

// Classes of the live tenant column (docs/corpus.md) that are not
// refusals before install.
const (
	classReady = "ready"
	// classStalled: still rolling out (or waiting for its quota) when the
	// wait ends, with no refusal.
	classStalled = "stalled"
	// classFailed: any other reason, an install error, or a terminal
	// reason that is no refusal of the documented list.
	classFailed = "failed"
	// classError: the platform could not be set up, or the controller
	// exited; the row says nothing of the chart.
	classError = "error"
)

// refusals map the reasons the controller gives before it installs
// anything, on a Tenant's Ready condition with Stalled true, to the
// documented refusal classes.
var refusals = map[string]string{
	tenancyv1.ReasonClusterRightsRefused: "rights",
	tenancyv1.ReasonClusterRoleNotHeld:   "rights",
	"InstallModeNotSupported":            "allns",
	tenancyv1.ReasonReleaseTampered:      "object",
	tenancyv1.ReasonCRDGroupReserved:     "crd",
	tenancyv1.ReasonCRDMetadataReserved:  "crd",
	tenancyv1.ReasonConversionWebhook:    "crd",
}

// refused reports whether class is a refusal before install.
func refused(class string) bool {
	for _, c := range refusals {
		if c == class {
			return true
		}
	}
	return false
}

// severity orders classes: a row takes its worst Tenant's class, so that
// a row is a refusal only when no Tenant stalled or failed.
func severity(class string) int {
	switch class {
	case classReady:
		return 0
	case classStalled:
		return 2
	case classFailed:
		return 3
	}
	return 1 // a refusal
}

// tenantState is what a Tenant showed when the wait for it ended.
type tenantState struct {
	name string
	// ready: Ready true for the Tenant's current generation.
	ready bool
	// stalled: the controller stopped retrying (Stalled true).
	stalled bool
	// reason and message are the Ready condition's.
	reason, message string
}

func (s tenantState) settled() bool { return s.ready || s.stalled }

// stateOf reads the Tenant's conditions.
func stateOf(tn *tenancyv1.Tenant) tenantState {
	st := tenantState{name: tn.Name, reason: "NoStatus", message: "the Tenant has no Ready condition"}
	if c := meta.FindStatusCondition(tn.Status.Conditions, "Ready"); c != nil {
		st.reason, st.message = c.Reason, c.Message
		st.ready = c.Status == metav1.ConditionTrue && c.ObservedGeneration == tn.Generation && tn.Status.ObservedGeneration == tn.Generation
	}
	st.stalled = meta.IsStatusConditionTrue(tn.Status.Conditions, "Stalled")
	return st
}

// classify turns the states of a project's Tenants into the row's class,
// with what each Tenant that is not ready said (once for a reason that an
// earlier Tenant gave).
func classify(states []tenantState) (class string, details []string) {
	class = classReady
	said := map[string]string{} // reason: the Tenant that gave it
	for _, s := range states {
		if s.ready {
			continue
		}
		c := classFailed
		switch {
		case s.stalled && refusals[s.reason] != "":
			c = refusals[s.reason]
		case !s.stalled && (s.reason == "Installing" || s.reason == "QuotaSyncing" || s.reason == "NoStatus"):
			c = classStalled
		}
		if severity(c) > severity(class) {
			class = c
		}
		if first, ok := said[s.reason]; ok {
			details = append(details, fmt.Sprintf("Tenant %s: %s, as %s", s.name, s.reason, first))
			continue
		}
		said[s.reason] = s.name
		details = append(details, fmt.Sprintf("Tenant %s: %s: %s", s.name, s.reason, oneLine(s.message)))
	}
	return class, details
}

// liveTenant gives the package's main chart to two Tenants on a fresh
// platform, with the chart's default values and the values it requires,
// and classifies what they become within tenantTimeout; a chart whose
// webhooks are on by default and that is not ready is tried again on two
// more Tenants with webhooks.enabled=false (nowebhook, "" when not
// tried).
func liveTenant(ctx context.Context, t tools, dir string, charts, required []string) (class, nowebhook string, details []string) {
	chart, err := mainChart(charts)
	if err != nil {
		return classError, "", []string{err.Error()}
	}
	p, err := startPlatform(ctx, t, dir)
	if err != nil {
		return classError, "", []string{err.Error()}
	}
	defer p.stop()
	try := func(names []string, set ...string) (string, []string) {
		values, err := tenantValues(chart, append(set, required...))
		if err != nil {
			return classError, []string{err.Error()}
		}
		states, err := p.runTenants(ctx, chart, values, names)
		if err != nil {
			return classError, []string{err.Error()}
		}
		return classify(states)
	}
	defer func() {
		if r := p.restarted(); r != "" {
			details = append(details, r)
		}
	}()
	class, details = try([]string{"corpus-a", "corpus-b"})
	if class == classReady || class == classError {
		return class, "", details
	}
	if on, _ := valueOf(chart, "webhooks.enabled"); on != true {
		return class, "", details
	}
	nowebhook, more := try([]string{"corpus-c", "corpus-d"}, "webhooks.enabled=false")
	if nowebhook != class {
		for _, d := range more {
			details = append(details, "webhooks.enabled=false: "+d)
		}
	}
	return class, nowebhook, details
}

// mainChart is the first chart that is not a CRD chart.
func mainChart(charts []string) (string, error) {
	for _, c := range charts {
		if !crdChartName.MatchString(filepath.Base(c)) {
			return c, nil
		}
	}
	return "", fmt.Errorf("no main chart among %v", charts)
}

// tenantValues are the Tenant's values for chart: each of set (helm
// --set syntax) whose key the chart has.
func tenantValues(chart string, set []string) (map[string]any, error) {
	values := map[string]any{}
	for _, s := range valuesOf(chart, set) {
		if err := strvals.ParseInto(s, values); err != nil {
			return nil, fmt.Errorf("value %s: %w", s, err)
		}
	}
	return values, nil
}

// operatorName is the Tenant's name for the chart's operator: the chart's
// name, within the 40 characters a release of a Tenant may have.
func operatorName(chart string) string {
	name := filepath.Base(chart)
	if len(name) > 40 {
		name = name[:40]
	}
	return strings.TrimRight(name, "-")
}

// runTenants creates a Tenant of one namespace, its own name, running
// chart with values, for each name, and waits until each is ready or
// stalled, or tenantTimeout passes.
func (p *platform) runTenants(ctx context.Context, chart string, values map[string]any, names []string) ([]tenantState, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		tn := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tenancyv1.TenantSpec{
			Namespaces: []string{name},
			Operators: []tenancyv1.OperatorSpec{{Name: operatorName(chart), Chart: &tenancyv1.ChartSource{Path: chart},
				Values: &apiextensionsv1.JSON{Raw: raw}}},
		}}
		if err := p.admin.Create(ctx, tn); err != nil {
			return nil, fmt.Errorf("creating Tenant %s: %w", name, err)
		}
	}
	states := make([]tenantState, len(names))
	deadline := time.Now().Add(tenantTimeout)
	for {
		settled := true
		for i, name := range names {
			if states[i].settled() {
				continue
			}
			tn := &tenancyv1.Tenant{}
			if err := p.admin.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
				return nil, fmt.Errorf("reading Tenant %s: %w", name, err)
			}
			states[i] = stateOf(tn)
			settled = settled && states[i].settled()
		}
		if settled || time.Now().After(deadline) {
			return states, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
