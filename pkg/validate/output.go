package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Summary counts the findings of several reports.
type Summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
}

// Summarize counts findings by severity.
func Summarize(reports []*Report) Summary {
	var s Summary
	for _, r := range reports {
		s.Errors += r.Count(SeverityError)
		s.Warnings += r.Count(SeverityWarning)
		s.Infos += r.Count(SeverityInfo)
	}
	return s
}

// WriteJSON writes the reports in opctl's stable JSON schema:
// {"reports": [Report...], "summary": Summary}.
func WriteJSON(w io.Writer, reports []*Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Reports []*Report `json:"reports"`
		Summary Summary   `json:"summary"`
	}{reports, Summarize(reports)})
}

// WriteText writes findings grouped by file with a summary line; color
// adds ANSI colors for a terminal.
func WriteText(w io.Writer, reports []*Report, color bool) error {
	paint := func(s Severity) string {
		if !color {
			return string(s)
		}
		code := map[Severity]string{SeverityError: "31", SeverityWarning: "33", SeverityInfo: "36"}[s]
		return "\x1b[" + code + "m" + string(s) + "\x1b[0m"
	}
	for _, r := range reports {
		fmt.Fprintf(w, "%s (%s)\n", r.Path, r.Kind)
		byFile := map[string][]Finding{}
		for _, f := range r.Findings {
			byFile[f.File] = append(byFile[f.File], f)
		}
		for _, file := range sortedKeys(byFile) {
			fs := byFile[file]
			slices.SortStableFunc(fs, func(a, b Finding) int { return a.Line - b.Line })
			label := file
			if label == "" {
				label = "(whole " + r.Kind + ")"
			}
			fmt.Fprintf(w, "  %s\n", label)
			for _, f := range fs {
				loc := ""
				if f.Line > 0 {
					loc = fmt.Sprintf(":%d", f.Line)
				}
				obj := ""
				if f.Object != "" {
					obj = " " + f.Object + ":"
				}
				fmt.Fprintf(w, "    %s%s %s %s%s %s\n", loc, strings.Repeat(" ", max(0, 5-len(loc))), paint(f.Severity), f.Check, obj, f.Message)
				if c, ok := CheckByID(f.Check); ok && f.Source == "opctl" {
					fmt.Fprintf(w, "           fix: %s\n", c.Hint)
				}
			}
		}
	}
	s := Summarize(reports)
	level := ""
	for _, r := range reports {
		if g := r.Grade; g != nil {
			writeGrade(w, g)
			writeMaturity(w, r.Maturity)
			level = fmt.Sprintf(", level %d/5", g.Level)
		}
	}
	_, err := fmt.Fprintf(w, "%d errors, %d warnings%s\n", s.Errors, s.Warnings, level)
	return err
}

// writeGrade lists the capability criteria by level with their evidence.
func writeGrade(w io.Writer, g *Grade) {
	declared := ""
	if g.Declared != "" {
		declared = fmt.Sprintf(" (declared: %s)", g.Declared)
	}
	fmt.Fprintf(w, "  capability level %d/5 %s%s\n", g.Level, g.Name, declared)
	for _, c := range g.Criteria {
		req := ""
		if c.Required {
			req = " (required)"
		}
		ev := ""
		if len(c.Evidence) > 0 {
			ev = ": " + c.Evidence[0]
		}
		fmt.Fprintf(w, "    L%d %-7s %s %s%s%s\n", c.Level, c.Status, c.ID, c.Text, req, ev)
	}
}

// writeMaturity lists the maturity guidelines by dimension.
func writeMaturity(w io.Writer, gs []Guideline) {
	dim := ""
	for _, g := range gs {
		if g.Dimension != dim {
			dim = g.Dimension
			fmt.Fprintf(w, "  maturity: %s\n", dim)
		}
		ev := ""
		if len(g.Evidence) > 0 {
			ev = ": " + g.Evidence[0]
		}
		fmt.Fprintf(w, "    %-14s %s%s\n", g.Status, g.Name, ev)
	}
}
