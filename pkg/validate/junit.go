package validate

import (
	"encoding/xml"
	"io"
	"path"
	"strings"
)

type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		ClassName string        `xml:"classname,attr"`
		Name      string        `xml:"name,attr"`
		Failure   *junitFailure `xml:"failure,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes one testsuite per file and one testcase per check and
// object. Errors are failures; warnings and infos pass with the message in
// system-out. A path without findings gets one passing testcase.
func WriteJUnit(w io.Writer, reports []*Report) error {
	all := junitSuites{Name: "opctl validate"}
	for _, r := range reports {
		byFile := map[string][]Finding{}
		for _, f := range r.Findings {
			byFile[f.File] = append(byFile[f.File], f)
		}
		if len(byFile) == 0 {
			byFile[""] = nil
		}
		for _, file := range sortedKeys(byFile) {
			suite := junitSuite{Name: path.Join(strings.TrimSuffix(r.Path, " (packaged)"), file)}
			if len(byFile[file]) == 0 {
				suite.Cases = append(suite.Cases, junitCase{ClassName: r.Kind, Name: "all checks"})
			}
			for _, f := range byFile[file] {
				c := junitCase{ClassName: suite.Name, Name: strings.TrimSpace(f.Check + " " + f.Object)}
				text := f.Message + " (" + f.Source + ")"
				if f.Severity == SeverityError {
					c.Failure = &junitFailure{Message: f.Message, Type: string(f.Severity), Text: text}
					suite.Failures++
				} else {
					c.SystemOut = string(f.Severity) + ": " + text
				}
				suite.Cases = append(suite.Cases, c)
			}
			suite.Tests = len(suite.Cases)
			all.Tests += suite.Tests
			all.Failures += suite.Failures
			all.Suites = append(all.Suites, suite)
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
