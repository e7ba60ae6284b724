package records

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestPack(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"small", []byte(`{"kind":"Role"}`)},
		{"repetitive", []byte(strings.Repeat(`{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]},`, 200))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Pack(tc.in)
			got, err := Unpack(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.in) {
				t.Fatalf("unpack(pack(x)) = %q, want %q", got, tc.in)
			}
			if len(tc.in) > 1000 && len(p)*5 > len(tc.in) {
				t.Errorf("packed %d bytes into %d: want at most a fifth", len(tc.in), len(p))
			}
		})
	}
	if _, err := Unpack([]byte("not deflate")); err == nil {
		t.Error("unpack of garbage: no error")
	}
}

func TestGunzippedSize(t *testing.T) {
	var small bytes.Buffer
	w := gzip.NewWriter(&small)
	_, _ = w.Write(bytes.Repeat([]byte("record "), 1000))
	_ = w.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		want int
	}{
		{"a gzip stream", small.Bytes(), 7000},
		{"too short", []byte{1, 2}, 0},
		{"a size past the bound", []byte{0x1f, 0x8b, 0xff, 0xff, 0xff, 0x7f}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gunzippedSize(tc.in); got != tc.want {
				t.Errorf("gunzippedSize = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPackConcurrent: more packs at once than there are writers wait for
// one, and each gets its own input back.
func TestPackConcurrent(t *testing.T) {
	n := 8 * cap(gzipWriters)
	packed := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { packed[i] = Pack([]byte(strings.Repeat(strconv.Itoa(i)+",", 5000))) })
	}
	wg.Wait()
	for i, p := range packed {
		got, err := Unpack(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat(strconv.Itoa(i)+",", 5000); string(got) != want {
			t.Fatalf("pack %d came back as %.20q…", i, got)
		}
	}
	if len(gzipWriters) != cap(gzipWriters) {
		t.Errorf("%d of %d writers returned", len(gzipWriters), cap(gzipWriters))
	}
}

// TestInflateBomb: a gzip stream that inflates past maxInflated (a
// compression bomb, as a forged release record would hold) is refused
// once maxInflated+1 bytes came out, by every reader of records.
func TestInflateBomb(t *testing.T) {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range MaxInflated>>20 + 8 {
		_, _ = w.Write(zeros)
	}
	_ = w.Close()
	bomb := gz.Bytes()
	var out bytes.Buffer
	if _, err := inflate(bomb, &out, true); !errors.Is(err, errInflatedTooLarge) {
		t.Errorf("inflate of %d bytes that inflate to %d MiB: %v, want errInflatedTooLarge", len(bomb), MaxInflated>>20+8, err)
	}
	if out.Len() > MaxInflated+1 {
		t.Errorf("inflate wrote %d bytes before refusing, want at most %d", out.Len(), MaxInflated+1)
	}
	record := []byte(base64.StdEncoding.EncodeToString(bomb))
	for name, read := range map[string]func() error{
		"gunzip":              func() error { _, err := Gunzip(bomb); return err },
		"decodeRecord":        func() error { _, err := DecodeRecord(record); return err },
		"decodeRecordSummary": func() error { _, err := DecodeRecordSummary(record); return err },
	} {
		if err := read(); !errors.Is(err, errInflatedTooLarge) {
			t.Errorf("%s of the bomb: %v, want errInflatedTooLarge", name, err)
		}
	}
}
