package instance_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

var resp = instance.RESP{Timeout: 5 * time.Second}

// session opens a connection for the test.
func session(t *testing.T, s *instancetest.Server) *instance.Conn {
	t.Helper()
	c, err := instance.Dial(context.Background(), s.Target(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c *instance.Conn, args ...string) any {
	t.Helper()
	v, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// follow points replica at primary and waits until it is in sync.
func follow(t *testing.T, replica, primary *instancetest.Server) {
	t.Helper()
	if err := resp.Follow(context.Background(), replica.Target(), "127.0.0.1", primary.Port); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fmt.Sprintf("%s in sync with %s", replica.Addr(), primary.Addr()), func() bool {
		st, err := resp.Status(context.Background(), replica.Target())
		return err == nil && st.LinkUp && !st.SyncInProgress
	})
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFailoverKeepsAcknowledgedWrites kills the primary of three servers
// while one replica hangs and has been cut off (its output buffer
// overflowed), so the two replicas differ; the most advanced one is
// promoted and every write acknowledged by WAIT survives.
func TestFailoverKeepsAcknowledgedWrites(t *testing.T) {
	ctx := context.Background()
	primary := instancetest.Start(t, "", "client-output-buffer-limit replica 256kb 0 0")
	a, b := instancetest.Start(t, ""), instancetest.Start(t, "")
	follow(t, a, primary)
	follow(t, b, primary)

	c := session(t, primary)
	acked := map[string]string{}
	pad := strings.Repeat("x", 16<<10) // 100 writes overflow a hung replica's buffers
	write := func(prefix string, n int, replicas string) {
		for i := range n {
			k, v := fmt.Sprintf("%s%d", prefix, i), fmt.Sprintf("value-%s-%d-%s", prefix, i, pad)
			do(t, c, "SET", k, v)
			if got, _ := do(t, c, "WAIT", replicas, "2000").(int64); got >= 1 {
				acked[k] = v
			}
		}
	}
	write("both-", 100, "2")
	b.Pause() // b stops taking the stream: only a acknowledges from here
	write("a-only-", 100, "1")
	primary.Kill()
	b.Resume()

	var cands []instance.Candidate
	for name, s := range map[string]*instancetest.Server{"a": a, "b": b} {
		st, err := resp.Status(ctx, s.Target())
		cands = append(cands, instance.Candidate{Name: name, Status: st, Err: err})
	}
	chosen, err := instance.ChoosePrimary(cands)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offsets after the primary died: %+v; chose %s", offsets(cands), chosen)
	if o := offsets(cands); o["a"] <= o["b"] {
		t.Fatalf("the hung replica is not behind: %v", o)
	}
	if chosen != "a" {
		t.Fatalf("promoted %s, want a, the replica with the highest offset", chosen)
	}
	if err := resp.Promote(ctx, a.Target()); err != nil {
		t.Fatal(err)
	}
	follow(t, b, a)

	if len(acked) != 200 {
		t.Fatalf("%d of 200 writes acknowledged by WAIT", len(acked))
	}
	for name, s := range map[string]*instancetest.Server{"new primary": a, "other replica": b} {
		got := instancetest.Keys(t, s, "both-", 100)
		maps.Copy(got, instancetest.Keys(t, s, "a-only-", 100))
		lost := instancetest.Missing(acked, got)
		t.Logf("%s: %d of %d acknowledged writes present", name, len(acked)-lost, len(acked))
		if lost > 0 {
			t.Errorf("%s lost %d acknowledged writes", name, lost)
		}
	}
	st, err := resp.Status(ctx, a.Target())
	if err != nil || !st.Primary() || st.ConnectedReplicas != 1 {
		t.Errorf("new primary: %+v, %v; want a primary with one replica", st, err)
	}
}

func offsets(cands []instance.Candidate) map[string]int64 {
	out := map[string]int64{}
	for _, c := range cands {
		out[c.Name] = c.Status.Offset
	}
	return out
}

// TestFollowResyncsAStuckReplica: a replica pointed at a server that is
// gone is stuck out of sync; Follow repoints it, and one already pointed
// right with its link down is restarted.
func TestFollowResyncsAStuckReplica(t *testing.T) {
	ctx := context.Background()
	primary, replica := instancetest.Start(t, ""), instancetest.Start(t, "")
	c := session(t, primary)
	for i := range 50 {
		do(t, c, "SET", fmt.Sprintf("k%d", i), "v")
	}
	gone := instancetest.FreePort(t)
	if err := resp.Follow(ctx, replica.Target(), "127.0.0.1", gone); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st, _ := resp.Status(ctx, replica.Target()); st.LinkUp {
		t.Fatalf("a replica of a closed port reports its link up: %+v", st)
	}
	follow(t, replica, primary)
	if got := len(instancetest.Keys(t, replica, "k", 50)); got != 50 {
		t.Errorf("after the resync the replica has %d of 50 keys", got)
	}
}

// TestBackupAndRestore snapshots a server over SYNC, checks the file
// against its checksum, restores it into a new server (started with the
// operator's appendonly configuration) and compares every key.
func TestBackupAndRestore(t *testing.T) {
	ctx := context.Background()
	src := instancetest.Start(t, "", "appendonly yes")
	c := session(t, src)
	const n = 1000
	for i := range n {
		do(t, c, "SET", fmt.Sprintf("key-%d", i), fmt.Sprintf("value-%d", i*7))
	}
	do(t, c, "HSET", "a-hash", "f", "v")
	dir := t.TempDir()
	res, err := instance.Backup(ctx, src.Target(), dir, "store-1", 2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backup: %+v", res)
	if res.Keys != n+1 || res.Size == 0 || len(res.SHA256) != 64 {
		t.Errorf("backup result %+v, want %d keys and a checksum", res, n+1)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "store-1.rdb.sha256"))
	if err != nil || string(sum) != res.SHA256+"  store-1.rdb\n" {
		t.Errorf("checksum file %q, %v", sum, err)
	}

	data := t.TempDir()
	if _, err := instance.Restore(filepath.Join(dir, res.File), res.SHA256, data); err != nil {
		t.Fatal(err)
	}
	restored := instancetest.Start(t, data, "appendonly yes")
	got := instancetest.Keys(t, restored, "key-", n)
	want := instancetest.Keys(t, src, "key-", n)
	mismatch := instancetest.Missing(want, got)
	t.Logf("restored %d of %d keys, %d differ", len(got), len(want), mismatch)
	if len(want) != n || len(got) != n || mismatch != 0 {
		t.Errorf("restored %d keys of %d, %d differ", len(got), len(want), mismatch)
	}
	if h, _ := do(t, session(t, restored), "HGET", "a-hash", "f").([]byte); string(h) != "v" {
		t.Errorf("hash field = %q", h)
	}

	// The restored server appends from here: a second restore must not
	// overwrite it.
	if _, err := instance.Restore(filepath.Join(dir, res.File), res.SHA256, data); !errors.Is(err, instance.ErrDataPresent) {
		t.Errorf("restore into a directory with data: %v, want ErrDataPresent", err)
	}
	// Another checksum: the first digit changed (a fixed "00" prefix is
	// the same checksum once in 256 backups).
	other := "0"
	if res.SHA256[0] == '0' {
		other = "1"
	}
	if _, err := instance.Restore(filepath.Join(dir, res.File), other+res.SHA256[1:], t.TempDir()); err == nil {
		t.Error("a checksum mismatch was not refused")
	}
}

// TestBackupRetention keeps the newest snapshots only.
func TestBackupRetention(t *testing.T) {
	ctx := context.Background()
	src := instancetest.Start(t, "")
	dir := t.TempDir()
	var pruned []string
	for i := range 4 {
		res, err := instance.Backup(ctx, src.Target(), dir, fmt.Sprintf("b%d", i), 2, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		pruned = append(pruned, res.Pruned...)
		time.Sleep(20 * time.Millisecond) // distinct modification times
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	for i := range left {
		left[i] = filepath.Base(left[i])
	}
	want := []string{"b2.rdb", "b2.rdb.sha256", "b3.rdb", "b3.rdb.sha256"}
	if fmt.Sprint(left) != fmt.Sprint(want) || fmt.Sprint(pruned) != "[b0.rdb b1.rdb]" {
		t.Errorf("left %v, pruned %v; want %v, [b0.rdb b1.rdb]", left, pruned, want)
	}
}
