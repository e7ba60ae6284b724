package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrDataPresent is returned by Restore when the data directory already
// holds data: a restore never overwrites a store.
var ErrDataPresent = errors.New("the data directory already holds data; nothing restored")

// Restore installs the snapshot src into dataDir, for the server to load
// when it starts, after checking that its SHA-256 is want. With
// appendonly on (the operator's default), a server that finds no
// append-only file starts empty and ignores dump.rdb, so the snapshot is
// installed as the base of a new multi-part append-only file
// (appendonlydir/appendonly.aof.1.base.rdb and its manifest, as Redis 7
// and Valkey write after a rewrite), and linked as dump.rdb for a server
// with appendonly off. A data directory that already holds data (dump.rdb or an
// append-only directory) is left alone with ErrDataPresent, so a pod
// restarted after its first start keeps what it wrote since.
func Restore(src, want, dataDir string) (int64, error) {
	for _, p := range []string{"dump.rdb", "appendonlydir"} {
		if _, err := os.Stat(filepath.Join(dataDir, p)); err == nil {
			return 0, ErrDataPresent
		}
	}
	in, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("opening the backup: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dataDir, ".restore-*.partial")
	if err != nil {
		return 0, fmt.Errorf("writing into the data directory: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, sum), in)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("copying the backup: %w", err)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != want {
		return 0, fmt.Errorf("backup %s has SHA-256 %s, want %s: it is damaged or not the backup named", src, got, want)
	}
	aof := filepath.Join(dataDir, ".appendonlydir.partial")
	if err := os.RemoveAll(aof); err != nil {
		return 0, err
	}
	if err := os.Mkdir(aof, 0o750); err != nil {
		return 0, fmt.Errorf("writing into the data directory: %w", err)
	}
	base := filepath.Join(aof, aofBase)
	if err := os.Rename(tmp.Name(), base); err != nil {
		return 0, fmt.Errorf("installing the backup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(aof, aofManifest), []byte("file "+aofBase+" seq 1 type b\n"), 0o640); err != nil {
		return 0, fmt.Errorf("writing the append-only manifest: %w", err)
	}
	// The directory appears whole, or not at all.
	if err := os.Rename(aof, filepath.Join(dataDir, "appendonlydir")); err != nil {
		return 0, fmt.Errorf("installing the backup: %w", err)
	}
	if err := os.Link(filepath.Join(dataDir, "appendonlydir", aofBase), filepath.Join(dataDir, "dump.rdb")); err != nil {
		return 0, fmt.Errorf("linking dump.rdb: %w", err)
	}
	return n, nil
}

// The names of the default append-only file (appendfilename appendonly.aof).
const (
	aofBase     = "appendonly.aof.1.base.rdb"
	aofManifest = "appendonly.aof.manifest"
)
