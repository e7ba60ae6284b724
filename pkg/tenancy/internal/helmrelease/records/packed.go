package records

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// gzipWriters and gzipReaders reuse gzip state: a release record is
// written twice and read on every reconcile of its release, and the drift
// memo packs every release object. A writer holds about 800 KB and
// compressing is all CPU, so there are as many writers as the process has
// processors (made on first use), and a compression waits for one rather
// than making another: with 32 installs at once, the writers of a pool
// were megabytes of the heap's peak.
var (
	gzipWriters = writerSlots(runtime.GOMAXPROCS(0))
	gzipReaders sync.Pool
)

// writerSlots is a channel of n slots for writers, each empty until used.
func writerSlots(n int) chan *gzip.Writer {
	slots := make(chan *gzip.Writer, n)
	for range n {
		slots <- nil
	}
	return slots
}

// gzipped is b gzipped at level; at recordCompression the writer is one
// of gzipWriters.
func gzipped(b []byte, level int) ([]byte, error) {
	var buf bytes.Buffer
	var w *gzip.Writer
	if level == recordCompression {
		if w = <-gzipWriters; w == nil {
			w, _ = gzip.NewWriterLevel(nil, recordCompression) // a valid level: no error
		}
		w.Reset(&buf)
		defer func() { gzipWriters <- w }()
	} else {
		var err error
		if w, err = gzip.NewWriterLevel(&buf, level); err != nil {
			return nil, err
		}
	}
	_, _ = w.Write(b) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	return buf.Bytes(), nil
}

// Gunzip inflates a gzip stream into one buffer sized by its trailer.
func Gunzip(gz []byte) ([]byte, error) {
	out := bytes.NewBuffer(make([]byte, 0, gunzippedSize(gz)+bytes.MinRead))
	if _, err := inflate(gz, out, true); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// MaxInflated bounds what one gzip stream may inflate to: a release
// record of the largest chart is a few MiB of JSON, and a stream that
// inflates further (a compression bomb: 500 KB of zeros inflate to
// 500 MB) is refused before it can take the controller's memory.
const MaxInflated = 32 << 20

// errInflatedTooLarge is a gzip stream that inflates past maxInflated.
var errInflatedTooLarge = fmt.Errorf("the data inflates past %d MiB: refusing to read it (a release record is a few MiB at most)", MaxInflated>>20)

// inflate inflates gz into out with a pooled reader: every member, or
// with multistream false only the first, returning the bytes after it.
// It stops reading at maxInflated bytes, with errInflatedTooLarge.
func inflate(gz []byte, out *bytes.Buffer, multistream bool) (rest []byte, err error) {
	r, _ := gzipReaders.Get().(*gzip.Reader)
	if r == nil {
		r = new(gzip.Reader)
	}
	defer gzipReaders.Put(r)
	// A bytes.Reader is read no further than a member's end.
	br := bytes.NewReader(gz)
	if err := r.Reset(br); err != nil {
		return nil, err
	}
	r.Multistream(multistream)
	n, err := out.ReadFrom(io.LimitReader(r, MaxInflated+1))
	if err != nil {
		return nil, err
	}
	if n > MaxInflated {
		return nil, errInflatedTooLarge
	}
	return gz[len(gz)-br.Len():], nil
}

// gunzippedSize is the size a gzip stream's trailer gives (ISIZE, the
// last 4 bytes), or 0 when it is past maxInflated: a hint, so that a
// stream inflates into one buffer instead of a chain of doublings.
func gunzippedSize(gz []byte) int {
	if len(gz) < 4 {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(gz[len(gz)-4:]))
	if n > MaxInflated {
		return 0
	}
	return n
}

// Pack gzips what the controller keeps in memory for every tenant (the
// drift memo's objects), into a slice of its own: not a buffer's spare
// capacity.
func Pack(b []byte) []byte {
	out, _ := gzipped(b, recordCompression) // the pooled level: no error
	return bytes.Clone(out)
}

// Unpack inflates what pack returned.
func Unpack(b []byte) ([]byte, error) { return Gunzip(b) }
