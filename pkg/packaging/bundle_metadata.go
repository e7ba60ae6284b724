package packaging

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The registry+v1 bundle labels (metadata/annotations.yaml and the
// bundle.Dockerfile's LABELs), as operator-registry's lib/bundle names them.
// opctl writes them itself: lib/bundle links containerd, podman's image
// library and bbolt (127 packages) into every opctl command for two small
// files; TestBundleMetadataMatchesOperatorRegistry holds the output to
// lib/bundle's.
const (
	registryV1Type      = "registry+v1"
	bundleManifestsDir  = "manifests/"
	bundleMetadataDir   = "metadata/"
	mediatypeLabel      = "operators.operatorframework.io.bundle.mediatype.v1"
	manifestsLabel      = "operators.operatorframework.io.bundle.manifests.v1"
	metadataLabel       = "operators.operatorframework.io.bundle.metadata.v1"
	packageLabel        = "operators.operatorframework.io.bundle.package.v1"
	channelsLabel       = "operators.operatorframework.io.bundle.channels.v1"
	channelDefaultLabel = "operators.operatorframework.io.bundle.channel.default.v1"
)

// bundleAnnotations is metadata/annotations.yaml of a registry+v1 bundle of
// pkg on channels (comma-separated); defaultChannel is left out when empty.
func bundleAnnotations(pkg, channels, defaultChannel string) ([]byte, error) {
	ann := map[string]string{
		mediatypeLabel: registryV1Type,
		manifestsLabel: bundleManifestsDir,
		metadataLabel:  bundleMetadataDir,
		packageLabel:   pkg,
		channelsLabel:  channels,
	}
	if defaultChannel != "" {
		ann[channelDefaultLabel] = defaultChannel
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(struct {
		Annotations map[string]string `yaml:"annotations"`
	}{ann}); err != nil {
		return nil, fmt.Errorf("encoding bundle annotations: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding bundle annotations: %w", err)
	}
	return buf.Bytes(), nil
}

// bundleDockerfile is the bundle.Dockerfile beside manifests/ and
// metadata/: a scratch image with the same labels.
func bundleDockerfile(pkg, channels, defaultChannel string) []byte {
	var b bytes.Buffer
	b.WriteString("FROM scratch\n\n")
	for _, l := range [][2]string{{mediatypeLabel, registryV1Type}, {manifestsLabel, bundleManifestsDir},
		{metadataLabel, bundleMetadataDir}, {packageLabel, pkg}, {channelsLabel, channels}} {
		fmt.Fprintf(&b, "LABEL %s=%s\n", l[0], l[1])
	}
	if defaultChannel != "" {
		fmt.Fprintf(&b, "LABEL %s=%s\n\n", channelDefaultLabel, defaultChannel)
	}
	b.WriteString("COPY manifests /manifests/\nCOPY metadata /metadata/\n")
	return b.Bytes()
}
