package signing

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkSign measures one signature over a typical 2 KB body.
func BenchmarkSign(b *testing.B) {
	keys := [][]byte{seq(0, KeySize)}
	body := bytes.Repeat([]byte("x"), 2048)
	ts := time.Unix(1700000000, 0)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Sign(keys, testEventID, ts, body)
	}
}
