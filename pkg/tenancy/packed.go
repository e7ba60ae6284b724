package tenancy

import (
	"bytes"
	"compress/flate"
	"io"
	"sync"
)

// packers reuse deflate writers: each holds about 1 MB of tables.
var packers = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed) // a valid level: no error
	return w
}}

// pack deflates b into a slice of its own (not the buffer's spare
// capacity): what the controller
// keeps in memory for every tenant (the drift memo) is held packed.
func pack(b []byte) []byte {
	var buf bytes.Buffer
	w := packers.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(b) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	packers.Put(w)
	return bytes.Clone(buf.Bytes())
}

// unpackers reuse inflate state.
var unpackers sync.Pool

// unpack inflates what pack returned.
func unpack(b []byte) ([]byte, error) {
	r, _ := unpackers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(bytes.NewReader(b))
	} else if err := r.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(r)
	unpackers.Put(r)
	return out, err
}
