package ratelimit

import (
	"encoding/binary"
	"errors"
)

// window is the sliding-window log of one budget: the times (Unix
// milliseconds) of the requests it counted, oldest first, as runs of
// (time, count) so a burst within one millisecond costs one pair. Only the
// most recent `limit` requests are ever needed: the next slot opens when
// the limit-th most recent one leaves, so older ones are dropped.
type window struct {
	at []int64
	n  []uint32
}

// prune drops the requests at or before cutoff (they left the window).
func (w *window) prune(cutoff int64) {
	i := 0
	for i < len(w.at) && w.at[i] <= cutoff {
		i++
	}
	if i > 0 {
		w.at = append(w.at[:0], w.at[i:]...)
		w.n = append(w.n[:0], w.n[i:]...)
	}
}

// total is the number of requests in the log.
func (w *window) total() int {
	t := 0
	for _, n := range w.n {
		t += int(n)
	}
	return t
}

// add counts one request at ms, keeping the log in order (a process whose
// clock is a little behind another's may add an earlier time).
// clone is a copy of w that shares nothing with it.
func (w *window) clone() window {
	return window{at: append([]int64(nil), w.at...), n: append([]uint32(nil), w.n...)}
}

// since counts the requests after cutoff, leaving w as it is.
func (w *window) since(cutoff int64) int {
	c := 0
	for i, at := range w.at {
		if at > cutoff {
			c += int(w.n[i])
		}
	}
	return c
}

func (w *window) add(ms int64) {
	i := len(w.at)
	for i > 0 && w.at[i-1] > ms {
		i--
	}
	if i > 0 && w.at[i-1] == ms {
		w.n[i-1]++
		return
	}
	w.at = append(w.at, 0)
	w.n = append(w.n, 0)
	copy(w.at[i+1:], w.at[i:])
	copy(w.n[i+1:], w.n[i:])
	w.at[i], w.n[i] = ms, 1
}

// keepLast drops all but the most recent limit requests.
func (w *window) keepLast(limit int) {
	drop := w.total() - limit
	i := 0
	for drop > 0 && i < len(w.n) {
		if int(w.n[i]) <= drop {
			drop -= int(w.n[i])
			i++
			continue
		}
		w.n[i] -= uint32(drop)
		drop = 0
	}
	if i > 0 {
		w.at = append(w.at[:0], w.at[i:]...)
		w.n = append(w.n[:0], w.n[i:]...)
	}
}

// nth is the time of the i-th oldest request (0-based); the log must hold
// more than i requests.
func (w *window) nth(i int) int64 {
	for k, n := range w.n {
		if i < int(n) {
			return w.at[k]
		}
		i -= int(n)
	}
	return w.at[len(w.at)-1]
}

// Encoding: version byte, pair count, first time (varint), its count, then
// for each further pair the time delta from the previous and the count, all
// as varints: about 3 bytes a pair.
const encodingV1 = 1

var errCorrupt = errors.New("ratelimit: corrupt window state")

func (w *window) encode() []byte {
	b := make([]byte, 0, 2+len(w.at)*4+binary.MaxVarintLen64)
	b = append(b, encodingV1)
	b = binary.AppendUvarint(b, uint64(len(w.at)))
	for i, at := range w.at {
		if i == 0 {
			b = binary.AppendVarint(b, at)
		} else {
			b = binary.AppendUvarint(b, uint64(at-w.at[i-1]))
		}
		b = binary.AppendUvarint(b, uint64(w.n[i]))
	}
	return b
}

func decodeWindow(b []byte) (window, error) {
	var w window
	if len(b) == 0 {
		return w, nil
	}
	if b[0] != encodingV1 {
		return window{}, errCorrupt
	}
	b = b[1:]
	pairs, k := binary.Uvarint(b)
	if k <= 0 || pairs > uint64(len(b)) {
		return window{}, errCorrupt
	}
	b = b[k:]
	w.at = make([]int64, 0, pairs)
	w.n = make([]uint32, 0, pairs)
	var prev int64
	for i := uint64(0); i < pairs; i++ {
		var at int64
		if i == 0 {
			v, k := binary.Varint(b)
			if k <= 0 {
				return window{}, errCorrupt
			}
			at, b = v, b[k:]
		} else {
			d, k := binary.Uvarint(b)
			if k <= 0 {
				return window{}, errCorrupt
			}
			at, b = prev+int64(d), b[k:]
		}
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > 1<<31 {
			return window{}, errCorrupt
		}
		b = b[k:]
		w.at = append(w.at, at)
		w.n = append(w.n, uint32(n))
		prev = at
	}
	if len(b) != 0 {
		return window{}, errCorrupt
	}
	return w, nil
}

// merge adds every request of o to w.
func (w *window) merge(o window) {
	for i, at := range o.at {
		for range o.n[i] {
			w.add(at)
		}
	}
}
