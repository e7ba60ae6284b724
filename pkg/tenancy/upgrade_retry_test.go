package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// A narrowing upgrade that fails (the owner filled count/configmaps) is
// not rolled back, since its deployed revision names objects in the
// namespace the platform took: it is run again, 30 s after the first
// failure and a minute after the second, and says so on the operator's
// status and in an Event, while the namespace stays held. Once the owner
// frees its quota, the next try passes and the namespace is handed back.
func TestUpgradeRetriedPastLeavingNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "retryfwd-" + suffix()
	a, b, _ := quotaFullTenant(t, c, name, "")
	owner := "owner-" + name

	setNamespaces(t, name, a)
	failed := func(in string) func(*tenancyv1.Tenant) error {
		return func(tn *tenancyv1.Tenant) error {
			for _, op := range tn.Status.Operators {
				if op.Health == tenancyv1.HealthFailed && op.Reason == tenancyv1.ReasonUpgradeFailed &&
					strings.Contains(op.LastError, "would re-enter namespace "+b+",") && strings.Contains(op.LastError, "next try at") &&
					strings.Contains(op.LastError, "(in "+in+")") && strings.Contains(op.LastError, "exceeded quota") {
					return nil
				}
			}
			return fmt.Errorf("operators %s", dump(tn.Status.Operators))
		}
	}
	waitTenant(t, name, 2*time.Minute, "the upgrade to namespace a alone failed, to be tried again in 30 s", failed("30s"))
	waitTenant(t, name, 2*time.Minute, "the upgrade failed again, to be tried again in a minute", failed("1m0s"))
	live := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: b}, live); err != nil || live.Labels[tenancyv1.LabelTenant] != name {
		t.Errorf("namespace %s, which the deployed revision still names, not held while the upgrade fails: %v, labels %v", b, err, live.Labels)
	}
	events, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name + ",reason=" + tenancyv1.ReasonUpgradeFailed})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, e := range events.Items {
		said = said || strings.Contains(e.Message, "would re-enter namespace "+b)
	}
	if !said {
		t.Errorf("no UpgradeFailed Event says the rollback would re-enter %s: %d Events", b, len(events.Items))
	}

	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	if err := oc.CoreV1().ConfigMaps(a).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name!=single-namespace"}); err != nil {
		t.Fatal(err)
	}
	if err := handedBack(ctx, b, 3*time.Minute); err != nil {
		t.Errorf("namespace %s not handed back after the owner freed the quota: %v", b, err)
	}
	waitTenant(t, name, 2*time.Minute, "the operator upgraded", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if op.Health == tenancyv1.HealthFailed || op.Reason != "" || op.LastError != "" {
				return fmt.Errorf("operators %s", dump(tn.Status.Operators))
			}
		}
		return nil
	})
}
