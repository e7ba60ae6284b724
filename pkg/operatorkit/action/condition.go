package action

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// Condition is st as a condition of type <Name>Succeeded (BackupSucceeded
// for backup): True once it succeeded, False once it failed, Unknown
// while it runs; the phase is the reason.
func Condition(st kitapi.ActionStatus, generation int64) metav1.Condition {
	c := metav1.Condition{Type: ConditionType(st.Name), Status: metav1.ConditionUnknown, Reason: string(st.Phase),
		Message: st.Message, ObservedGeneration: generation}
	switch st.Phase {
	case kitapi.ActionSucceeded:
		c.Status = metav1.ConditionTrue
	case kitapi.ActionFailed:
		c.Status = metav1.ConditionFalse
	}
	if c.Message == "" {
		c.Message = "job " + st.Job + " " + strings.ToLower(string(st.Phase))
	}
	return c
}

// ConditionType is the condition type of an action.
func ConditionType(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Succeeded"
}
