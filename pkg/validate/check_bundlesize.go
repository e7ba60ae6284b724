package validate

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// BundleSize (OPC-B005) wants a bundle well under 1 MiB.
var BundleSize = register(Check{ID: "OPC-B005", Severity: SeverityWarning, Relayed: false,
	Rationale: "A bundle must stay under 1 MiB (with margin) to fit in a ConfigMap and in etcd.",
	Hint:      "Trim CRD descriptions or move large objects out of the bundle."}, checkBundleSize)

// MaxBundleBytes is where OPC-B005 starts warning: 80% of the 1 MiB limit.
const MaxBundleBytes = 1 << 20 * 8 / 10

func checkBundleSize(c *Check, r *Report, in *bundleInput) {
	if size := treeSize(in.dir); size > MaxBundleBytes {
		r.add(c, fmt.Sprintf("bundle is %d bytes, over %d (80%% of 1 MiB)", size, MaxBundleBytes), "", "")
	}
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
