package packaging

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDockerfile reads arbitrary Dockerfiles: never a panic, and a go
// build found names a package or the current directory.
func FuzzDockerfile(f *testing.F) {
	f.Add("FROM golang AS b\nRUN CGO_ENABLED=0 go build -a -o manager cmd/main.go\nFROM gcr.io/distroless/static:nonroot\nUSER 65532:65532\n")
	f.Add("FROM x\nENV U=1001\nUSER ${U}\nRUN [\"go\", \"build\", \"-o\", \"m\", \"./cmd\"] && go build -o\n")
	f.Add("RUN go build \\\n  -o manager \\\n  main.go\nUSER nonroot\n#")
	f.Fuzz(func(t *testing.T, text string) {
		d := parseDockerfile([]byte(text))
		for _, b := range d.Builds {
			if strings.ContainsAny(b.Pkg, "\n") {
				t.Fatalf("package %q spans lines", b.Pkg)
			}
		}
		_, _ = d.buildFor("manager")
		if uid, _, ok := d.nonRootUser(); ok && uid <= 0 {
			t.Fatalf("non-root uid %d", uid)
		}
	})
}

// FuzzWatchScan scans arbitrary Go source: never a panic, and every
// setting found is named with its file and line.
func FuzzWatchScan(f *testing.F) {
	f.Add("package main\n\nimport (\n\t\"os\"\n\t\"strings\"\n)\n\nfunc watchNamespaces() []string { return strings.Split(os.Getenv(\"WATCH_NAMESPACE\"), \",\") }\n")
	f.Add("package main\n\nimport \"flag\"\n\nvar ns = flag.String(\"namespace\", \"\", \"\")\n")
	f.Add("package x\n\ntype C struct { W string `env:\"WATCH_NAMESPACE\"` }\nvar _ = cache.Options{DefaultNamespaces: nil}\n")
	f.Add("package x\n\nfunc (")
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		s := newWatchScan(dir, nil)
		_ = s.file(filepath.Join(dir, "main.go"), []byte(src))
		settings, _, _ := s.result()
		for _, w := range settings {
			if w.Name == "" || !strings.HasPrefix(w.Where, "main.go:") {
				t.Fatalf("setting %+v", w)
			}
		}
	})
}
