package testregistry

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Manifest reads the manifest or index repo:ref (a tag or a digest) with
// the registry's HTTP API, not with the client that pushed it, and
// decodes it. Plain-HTTP registries only.
func (r *Registry) Manifest(t testing.TB, repo, ref string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.Host+"/v2/"+repo+"/manifests/"+ref, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json")
	return r.getJSON(t, req)
}

// BlobJSON reads a JSON blob (an image's config) of repo by digest.
func (r *Registry) BlobJSON(t testing.TB, repo, digest string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+r.Host+"/v2/"+repo+"/blobs/"+digest, nil)
	return r.getJSON(t, req)
}

func (r *Registry) getJSON(t testing.TB, req *http.Request) map[string]any {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", req.URL, resp.Status, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	return m
}
