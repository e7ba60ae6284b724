package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// ShardTrace is one line of --shard-trace: a reconcile a shard ran.
type ShardTrace struct {
	Shard  string `json:"shard"`
	Tenant string `json:"tenant"`
	Start  int64  `json:"start"` // Unix nanoseconds
	End    int64  `json:"end"`
}

// traceTo returns the trace hook of shard that appends ShardTrace lines to
// path, or nil when path is empty.
func traceTo(path, shard string) (func(string, time.Time, time.Time), error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--shard-trace: %w", err)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(f)
	return func(tenant string, start, end time.Time) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(ShardTrace{Shard: shard, Tenant: tenant, Start: start.UnixNano(), End: end.UnixNano()})
	}, nil
}
