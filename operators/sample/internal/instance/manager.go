package instance

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Target is one server: its address and password.
type Target struct {
	Addr     string
	Password string
}

// Status is what the operator reads from a server (INFO).
type Status struct {
	// Role is master or slave, as the server names it.
	Role string
	// MasterHost and MasterPort are whom a replica follows.
	MasterHost string
	MasterPort int
	// LinkUp: a replica's link to its primary is up and in sync.
	LinkUp bool
	// SyncInProgress: a replica is loading a full resynchronization.
	SyncInProgress bool
	// LinkDownSeconds is how long a replica's link has been down.
	LinkDownSeconds int64
	// Offset is the replication offset: on a replica, how much of the
	// primary's stream it has processed; the most advanced replica has the
	// highest.
	Offset int64
	// ConnectedReplicas is the number of replicas a primary streams to.
	ConnectedReplicas int
	// OpsPerSecond is the server's instantaneous_ops_per_sec.
	OpsPerSecond int64
	// CommandsProcessed is total_commands_processed.
	CommandsProcessed int64
	// UsedMemory and MaxMemory are in bytes; MaxMemory 0 is no limit.
	UsedMemory, MaxMemory int64
	// Keys in database 0.
	Keys int64
}

// Primary reports whether the server is a primary.
func (s Status) Primary() bool { return s.Role == "master" }

// Manager is the seam between the controller and the data path: the
// operations the KVStore operator performs on running servers. The
// controller decides; a Manager reads and acts.
type Manager interface {
	// Status reads a server's role, replication and load.
	Status(ctx context.Context, t Target) (Status, error)
	// Promote makes a replica a primary (REPLICAOF NO ONE).
	Promote(ctx context.Context, t Target) error
	// Follow makes t a replica of the primary at host:port, which is how
	// t reaches it, authenticating with t's password. A replica already
	// following host:port with its link up is left alone; one whose link
	// is down is restarted, which forces a resynchronization.
	Follow(ctx context.Context, t Target, host string, port int) error
}

// RESP is the Manager that speaks the Redis protocol.
type RESP struct {
	// Timeout bounds each operation; zero is 5 seconds.
	Timeout time.Duration
}

var _ Manager = RESP{}

func (m RESP) timeout() time.Duration {
	if m.Timeout > 0 {
		return m.Timeout
	}
	return 5 * time.Second
}

func (m RESP) with(ctx context.Context, t Target, f func(*Conn) error) error {
	c, err := Dial(ctx, t, m.timeout())
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// Status implements Manager.
func (m RESP) Status(ctx context.Context, t Target) (Status, error) {
	var st Status
	err := m.with(ctx, t, func(c *Conn) error {
		info, err := text(c.Do("INFO"))
		if err != nil {
			return fmt.Errorf("INFO on %s: %w", t.Addr, err)
		}
		st = parseInfo(info)
		return nil
	})
	return st, err
}

// Promote implements Manager.
func (m RESP) Promote(ctx context.Context, t Target) error {
	return m.with(ctx, t, func(c *Conn) error {
		if _, err := c.Do("REPLICAOF", "NO", "ONE"); err != nil {
			return fmt.Errorf("promoting %s: %w", t.Addr, err)
		}
		return nil
	})
}

// Follow implements Manager.
func (m RESP) Follow(ctx context.Context, t Target, host string, port int) error {
	return m.with(ctx, t, func(c *Conn) error {
		info, err := text(c.Do("INFO", "replication"))
		if err != nil {
			return fmt.Errorf("INFO on %s: %w", t.Addr, err)
		}
		st := parseInfo(info)
		following := !st.Primary() && st.MasterHost == host && st.MasterPort == port
		if following && (st.LinkUp || st.SyncInProgress) {
			return nil
		}
		if following {
			// Already pointed there with the link down: the same
			// REPLICAOF is a no-op, so detach first to force a new sync.
			if _, err := c.Do("REPLICAOF", "NO", "ONE"); err != nil {
				return fmt.Errorf("detaching %s: %w", t.Addr, err)
			}
		}
		if t.Password != "" {
			if _, err := c.Do("CONFIG", "SET", "masterauth", t.Password); err != nil {
				return fmt.Errorf("setting masterauth on %s: %w", t.Addr, err)
			}
		}
		if _, err := c.Do("REPLICAOF", host, strconv.Itoa(port)); err != nil {
			return fmt.Errorf("pointing %s at %s: %w", t.Addr, net.JoinHostPort(host, strconv.Itoa(port)), err)
		}
		return nil
	})
}

// parseInfo reads the fields of INFO that Status holds.
func parseInfo(info string) Status {
	var st Status
	f := map[string]string{}
	for _, l := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			f[k] = v
		}
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(f[k], 10, 64); return n }
	st.Role = f["role"]
	st.MasterHost = f["master_host"]
	st.MasterPort = int(num("master_port"))
	st.LinkUp = f["master_link_status"] == "up"
	st.SyncInProgress = f["master_sync_in_progress"] == "1"
	st.LinkDownSeconds = num("master_link_down_since_seconds")
	st.ConnectedReplicas = int(num("connected_slaves"))
	st.OpsPerSecond = num("instantaneous_ops_per_sec")
	st.CommandsProcessed = num("total_commands_processed")
	st.UsedMemory, st.MaxMemory = num("used_memory"), num("maxmemory")
	st.Offset = num("master_repl_offset")
	if !st.Primary() {
		// What a replica has processed; master_repl_offset is the same on
		// a replica, slave_repl_offset names it explicitly.
		if o, ok := f["slave_repl_offset"]; ok {
			st.Offset, _ = strconv.ParseInt(o, 10, 64)
		}
	}
	for _, kv := range strings.Split(f["db0"], ",") {
		if n, ok := strings.CutPrefix(kv, "keys="); ok {
			st.Keys, _ = strconv.ParseInt(n, 10, 64)
		}
	}
	return st
}
