package imagebuild

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// goArch maps an OCI architecture to GOARCH and the ELF machine its
// binaries must have.
var goArch = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
	"386":     elf.EM_386,
}

func goArchNames() []string { return slices.Sorted(maps.Keys(goArch)) }

// binary is one platform's program and what its build information says.
type binary struct {
	Platform v1.Platform
	Data     []byte
	Info     *buildinfo.BuildInfo
}

// goBuild builds the main package for one platform: static, -trimpath,
// no VCS stamping, so that the same source and toolchain give the same
// bytes. The environment's GOFLAGS and module settings are kept; GOOS,
// GOARCH, GOARM and CGO_ENABLED are set.
func goBuild(ctx context.Context, o *Options, p v1.Platform) (*binary, error) {
	tmp, err := os.MkdirTemp("", "opctl-build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "program")
	cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, o.Main)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if p.Architecture == "arm" {
		cmd.Env = append(cmd.Env, "GOARM="+strings.TrimPrefix(orDefault(p.Variant, "v7"), "v"))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s for %s in %s: %w\n%s", o.Main, p.String(), o.Dir, err, strings.TrimSpace(stderr.String()))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	if err := checkELF(b, p); err != nil {
		return nil, err
	}
	info, err := buildinfo.Read(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading the build information of %s for %s: %w", o.Main, p.String(), err)
	}
	if info.Main.Path == "" {
		return nil, fmt.Errorf("%s in %s is not in a Go module: build it inside one (go.mod), so its modules are known", o.Main, o.Dir)
	}
	return &binary{Platform: p, Data: b, Info: info}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkELF refuses a binary that is not a static ELF executable of the
// platform's machine.
func checkELF(b []byte, p v1.Platform) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("the %s build is not an ELF executable: %w", p.String(), err)
	}
	defer f.Close()
	if want := goArch[p.Architecture]; f.Machine != want {
		return fmt.Errorf("the %s build is an ELF for %s, not %s", p.String(), f.Machine, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("the %s build is dynamically linked: build with CGO_ENABLED=0 and no cgo packages", p.String())
		}
	}
	return nil
}

// moduleList is what a build links: path@version of each module, the
// main one first.
func moduleList(info *buildinfo.BuildInfo) []string {
	out := []string{info.Main.Path + "@" + info.Main.Version}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		out = append(out, d.Path+"@"+m.Version)
	}
	return out
}
