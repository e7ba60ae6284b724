package instance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// rdbMagic starts every RDB file.
var rdbMagic = []byte("REDIS")

// BackupResult is what a backup wrote; the backup Job prints it as its
// termination message, in JSON.
type BackupResult struct {
	// File is the snapshot's name in the backup directory.
	File string `json:"file"`
	// Size in bytes, and SHA256 of the file.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Keys in database 0 when the snapshot began.
	Keys int64 `json:"keys"`
	// Pruned are the older snapshots removed to keep the retention.
	Pruned []string `json:"pruned,omitempty"`
}

// Backup takes an RDB snapshot of the server at t over the replication
// protocol (SYNC, as a replica's first synchronization) into dir/name.rdb,
// writes its SHA-256 beside it (name.rdb.sha256, in sha256sum's format),
// and then keeps only the newest keep snapshots of dir (zero keeps all).
// The snapshot is written to a temporary file and renamed, so dir never
// holds a partial one.
func Backup(ctx context.Context, t Target, dir, name string, keep int, timeout time.Duration) (BackupResult, error) {
	res := BackupResult{File: name + ".rdb"}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return res, fmt.Errorf("creating %s: %w", dir, err)
	}
	c, err := Dial(ctx, t, timeout)
	if err != nil {
		return res, err
	}
	defer c.Close()
	if res.Keys, err = dbsize(c); err != nil {
		return res, err
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*.partial")
	if err != nil {
		return res, fmt.Errorf("creating the snapshot file: %w", err)
	}
	defer os.Remove(tmp.Name())
	sum := sha256.New()
	n, err := snapshot(c, io.MultiWriter(tmp, sum))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("snapshot of %s: %w", t.Addr, err)
	}
	res.Size, res.SHA256 = n, hex.EncodeToString(sum.Sum(nil))
	final := filepath.Join(dir, res.File)
	if err := os.WriteFile(final+".sha256", []byte(res.SHA256+"  "+res.File+"\n"), 0o640); err != nil {
		return res, fmt.Errorf("writing the checksum: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return res, fmt.Errorf("saving the snapshot: %w", err)
	}
	res.Pruned, err = prune(dir, keep)
	return res, err
}

func dbsize(c *Conn) (int64, error) {
	v, err := c.Do("DBSIZE")
	if err != nil {
		return 0, fmt.Errorf("DBSIZE: %w", err)
	}
	n, _ := v.(int64)
	return n, nil
}

// snapshot asks for a full synchronization and copies the RDB payload
// that the primary sends first to w.
func snapshot(c *Conn, w io.Writer) (int64, error) {
	// Valkey and Redis 7 stop the stream after the RDB for an rdb-only
	// replica; an older server refuses the option and streams on, which
	// closing the connection ends.
	_, _ = c.Do("REPLCONF", "rdb-only", "1")
	if err := c.send("SYNC"); err != nil {
		return 0, err
	}
	var l string
	for {
		// Newlines keep the link alive while the primary forks its save.
		var err error
		if l, err = c.line(); err != nil {
			return 0, fmt.Errorf("waiting for the snapshot: %w", err)
		}
		if l != "" {
			break
		}
	}
	switch {
	case strings.HasPrefix(l, "-"):
		return 0, ServerError(l[1:])
	case !strings.HasPrefix(l, "$") || strings.HasPrefix(l, "$EOF:"):
		return 0, fmt.Errorf("unexpected reply to SYNC: %.40q", l)
	}
	size, err := strconv.ParseInt(l[1:], 10, 64)
	if err != nil || size < int64(len(rdbMagic)) {
		return 0, fmt.Errorf("bad snapshot length %q", l)
	}
	head := make([]byte, len(rdbMagic))
	if _, err := io.ReadFull(c.r, head); err != nil {
		return 0, err
	}
	if !bytes.Equal(head, rdbMagic) {
		return 0, fmt.Errorf("the payload is not an RDB file (starts %q)", head)
	}
	if _, err := w.Write(head); err != nil {
		return 0, err
	}
	n, err := io.CopyN(w, c.r, size-int64(len(head)))
	return n + int64(len(head)), err
}

// prune removes all but the newest keep snapshots of dir, with their
// checksums, and returns the names removed.
func prune(dir string, keep int) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.rdb"))
	if err != nil {
		return nil, err
	}
	type snap struct {
		path string
		mod  time.Time
	}
	var snaps []snap
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap{f, fi.ModTime()})
	}
	sort.SliceStable(snaps, func(i, j int) bool {
		if !snaps[i].mod.Equal(snaps[j].mod) {
			return snaps[i].mod.After(snaps[j].mod)
		}
		return snaps[i].path > snaps[j].path
	})
	var pruned []string
	for _, s := range snaps[min(keep, len(snaps)):] {
		for _, p := range []string{s.path, s.path + ".sha256"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return pruned, fmt.Errorf("pruning %s: %w", p, err)
			}
		}
		pruned = append(pruned, filepath.Base(s.path))
	}
	return pruned, nil
}
