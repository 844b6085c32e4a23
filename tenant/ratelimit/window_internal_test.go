package ratelimit

import (
	"slices"
	"testing"
)

// The stored log round-trips, and unreadable state is refused rather than
// misread.
func TestWindowEncodingRoundTrips(t *testing.T) {
	t.Parallel()
	var w window
	for _, ms := range []int64{1000, 1000, 1005, 1003, 2000, 2000, 2000} {
		w.add(ms)
	}
	if !slices.Equal(w.at, []int64{1000, 1003, 1005, 2000}) || !slices.Equal(w.n, []uint32{2, 1, 1, 3}) || w.total() != 7 {
		t.Fatalf("log %v %v", w.at, w.n)
	}
	got, err := decodeWindow(w.encode())
	if err != nil || !slices.Equal(got.at, w.at) || !slices.Equal(got.n, w.n) {
		t.Fatalf("round trip: %v %v %v", got.at, got.n, err)
	}
	w.keepLast(4)
	if !slices.Equal(w.at, []int64{1005, 2000}) || !slices.Equal(w.n, []uint32{1, 3}) || w.nth(1) != 2000 || w.nth(0) != 1005 {
		t.Fatalf("keepLast: %v %v", w.at, w.n)
	}
	w.prune(1005)
	if w.total() != 3 {
		t.Fatalf("prune: %v %v", w.at, w.n)
	}
	for _, bad := range [][]byte{{9}, {1, 5}, {1, 1, 2}, {1, 1, 2, 0}, append(w.encode(), 0)} {
		if _, err := decodeWindow(bad); err == nil {
			t.Errorf("%v decoded", bad)
		}
	}
}

func FuzzDecodeWindow(f *testing.F) {
	var w window
	w.add(5)
	w.add(9)
	f.Add(w.encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeWindow(b)
		if err != nil {
			return
		}
		again, err := decodeWindow(w.encode())
		if err != nil || again.total() != w.total() {
			t.Fatalf("re-encode: %v", err)
		}
	})
}
