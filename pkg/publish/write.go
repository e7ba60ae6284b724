package publish

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// writeCatalog writes the package's catalog file, atomically.
func writeCatalog(opts Options, plan *catalogPlan) (*CatalogResult, error) {
	res := &CatalogResult{
		Dir: opts.CatalogDir, File: plan.File, Bundle: plan.Bundle,
		DefaultChannel: plan.DefaultChannel, Changes: plan.Changes, Action: ActionUnchanged,
	}
	if !plan.Changed() {
		return res, nil
	}
	res.Action = "updated"
	if plan.Before == nil {
		res.Action = "created"
	}
	if opts.DryRun {
		res.Action = "would be " + res.Action
		return res, nil
	}
	if err := writeFileAtomic(filepath.Join(opts.CatalogDir, filepath.FromSlash(plan.File)), plan.After); err != nil {
		return nil, fmt.Errorf("writing the catalog: %w", err)
	}
	return res, nil
}

// writeChartRepo adds the chart archive to a classic chart repository
// directory and its index.yaml. Entries are stamped with opts.Created so
// the index is reproducible.
func writeChartRepo(opts Options, ch *chartArchive) (string, error) {
	index := filepath.Join(opts.ChartRepoDir, "index.yaml")
	idx := repo.NewIndexFile()
	if _, err := os.Stat(index); err == nil {
		if idx, err = repo.LoadIndexFile(index); err != nil {
			return "", fmt.Errorf("reading %s: %w", index, err)
		}
	}
	tgz := filepath.Join(opts.ChartRepoDir, ch.FileName())
	if old, err := os.ReadFile(tgz); err == nil && !bytes.Equal(old, ch.Data) && !opts.Force {
		return "", fmt.Errorf("%s already exists with different content: publish a new version, or pass --force", tgz)
	}
	if opts.DryRun {
		return index, nil
	}
	if idx.Has(ch.Name, ch.Version) {
		// Replace the entry (same version, maybe forced content).
		vs := idx.Entries[ch.Name]
		for i := range vs {
			if vs[i].Version == ch.Version {
				idx.Entries[ch.Name] = append(vs[:i], vs[i+1:]...)
				break
			}
		}
	}
	if err := idx.MustAdd(ch.Metadata, ch.FileName(), opts.ChartRepoURL, ch.Digest[len("sha256:"):]); err != nil {
		return "", fmt.Errorf("adding %s to %s: %w", ch.FileName(), index, err)
	}
	for _, vs := range idx.Entries {
		for _, v := range vs {
			if v.Version == ch.Version && v.Name == ch.Name {
				v.Created = opts.Created
			}
		}
	}
	idx.Generated = opts.Created
	idx.SortEntries()
	if err := writeFileAtomic(tgz, ch.Data); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(idx)
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(index, out); err != nil {
		return "", err
	}
	return index, nil
}

// writeFileAtomic writes through a temporary file in the same directory.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
