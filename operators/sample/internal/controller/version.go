package controller

import (
	"fmt"
	"strconv"
	"strings"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// DefaultImage is the Valkey image repository used when neither the
// KVStore nor RELATED_IMAGE_KVSTORE names one.
const DefaultImage = "valkey/valkey"

// Supported versions: [minSupported, maxExclusive).
var (
	minSupported = semver{7, 2, 0}
	maxExclusive = semver{9, 0, 0}
)

type semver [3]int

func parseVersion(s string) (semver, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
	}
	var v semver
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, fmt.Errorf("version %q is not MAJOR.MINOR.PATCH", s)
		}
		v[i] = n
	}
	return v, nil
}

func (v semver) less(o semver) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// checkVersion refuses versions outside the supported range.
func checkVersion(s string) error {
	v, err := parseVersion(s)
	if err != nil {
		return err
	}
	if v.less(minSupported) || !v.less(maxExclusive) {
		return fmt.Errorf("spec.version %s is not supported: use a version from %s up to, not including, %s", s, minSupported, maxExclusive)
	}
	return nil
}

// runVersion is the version the pods should run: spec.version, or the
// current version while a failed upgrade is rolled back.
func runVersion(k *kvv1.KVStore) string {
	if k.Status.FailedVersion != "" && k.Status.FailedVersion == k.Spec.Version && k.Status.CurrentVersion != "" {
		return k.Status.CurrentVersion
	}
	return k.Spec.Version
}

// imageFor returns the image for version. base is spec.image, else the
// operator's related image, else DefaultImage. A digest-pinned base is used
// as is for the version its tag names; otherwise its repository gets the
// version as tag.
func imageFor(base, version string) string {
	if base == "" {
		base = DefaultImage
	}
	name, digest, _ := strings.Cut(base, "@")
	repo, tag := name, ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo, tag = name[:i], name[i+1:]
	}
	if digest != "" && tag == version {
		return base
	}
	return repo + ":" + version
}
