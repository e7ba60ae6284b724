package contract

import "testing"

func TestGate(t *testing.T) {
	tests := []struct{ template, want string }{
		{"{{- if .Values.apiService.enabled }}\nkind: APIService\n{{- end }}\n", "apiService.enabled"},
		{"\n{{ if .Values.namespace -}}\nkind: Namespace\n{{ end }}", "namespace"},
		{"kind: Deployment\n{{- if .Values.x }}{{ end }}\n", ""},
		{"{{- if and .Values.a .Values.b }}\n{{- end }}\n", ""},
		{"{{- if not .Values.a }}\n{{- end }}\n", ""},
		{"{{- if .Values.a | not }}\n{{- end }}\n", ""},
	}
	for _, tt := range tests {
		if got := Gate([]byte(tt.template)); got != tt.want {
			t.Errorf("Gate(%q) = %q, want %q", tt.template, got, tt.want)
		}
	}
}
