package hostile

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// idemHeader is the Idempotency-Key header of spec 4.1. Every write the
// run makes on /public/v1 carries a valid one of its own (unless the case
// is about the header) and is sent a second time with it: the retry must
// answer as the first request did and write nothing again. This is what
// a careful client does, so a write that breaks only with a key (ping's
// empty 202 once answered 500 with one) shows here too.
const idemHeader = "Idempotency-Key"

// shownOnce are, by the answer's object, the fields a replay leaves out
// (spec 4.1: the secret of a created endpoint, docs/api.md: of a rotation
// too; the one-time link of a portal session).
var shownOnce = map[string][]string{"webhook_endpoint": {"secret"}, "portal_session": {"url"}}

// newIdemKey is a random UUID v4, the key format docs/api.md recommends.
func newIdemKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// isWrite reports whether method is one that takes an Idempotency-Key.
func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// withKey gives a public write case a fresh key, unless it sends its own
// (the idempotency_key cases) or is sent as raw bytes; false when the case
// is not one to retry.
func withKey(k *kase) bool {
	public := strings.HasPrefix(k.Req.Path, Prefix+"/")
	if k.Raw != nil || !public || !isWrite(k.Req.Method) || k.Req.Source != "" {
		return false
	}
	if _, own := k.Req.Header[idemHeader]; own {
		return false
	}
	h := k.Req.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set(idemHeader, newIdemKey())
	k.Req.Header = h
	return true
}

// retried reports whether an answer is one to send again: not a 401 or
// 429 (a retry would spend the address's budget of authentication
// failures), a 413 (a megabyte more for a refusal before any key is
// read), or a 5xx (already a failure).
func retried(first answer) bool {
	switch {
	case first.Status == http.StatusUnauthorized, first.Status == http.StatusTooManyRequests,
		first.Status == http.StatusRequestEntityTooLarge, first.Status >= 500:
		return false
	}
	return true
}

// replayProblems compares the answer to a retry with the same key with
// the first answer: the same status; for a success the stored answer
// (marked Idempotent-Replayed, same body but the fields shown once, same
// Content-Type and Location); for an error the same code and errors[]
// (its message and request_id are the retry's own).
func replayProblems(first, again answer) []string {
	var out []string
	if again.Status != first.Status {
		return []string{fmt.Sprintf("retried with its Idempotency-Key: %d, first %d", again.Status, first.Status)}
	}
	if first.Status >= 400 {
		if a, b := first.errorField("code"), again.errorField("code"); a != b {
			out = append(out, fmt.Sprintf("retried with its Idempotency-Key: code %q, first %q", b, a))
		}
		if a, b := paramsOf(first), paramsOf(again); !slices.Equal(a, b) {
			out = append(out, fmt.Sprintf("retried with its Idempotency-Key: errors[] %v, first %v", b, a))
		}
		return out
	}
	if again.Header.Get("Idempotent-Replayed") != "true" {
		out = append(out, "retried with its Idempotency-Key: not a replay (no Idempotent-Replayed: true)")
	}
	for _, h := range []string{"Content-Type", "Location"} {
		if a, b := first.Header.Get(h), again.Header.Get(h); a != b {
			out = append(out, fmt.Sprintf("retried with its Idempotency-Key: %s %q, first %q", h, b, a))
		}
	}
	want, got := string(first.Raw), string(again.Raw)
	if first.JSON != nil {
		m := map[string]any{}
		object, _ := first.JSON["object"].(string)
		for k, v := range first.JSON {
			if !slices.Contains(shownOnce[object], k) {
				m[k] = v
			}
		}
		a, _ := json.Marshal(m)
		b, _ := json.Marshal(again.JSON)
		want, got = string(a), string(b)
	}
	if want != got {
		out = append(out, fmt.Sprintf("retried with its Idempotency-Key: another body: %s", snippet([]byte(got))))
	}
	return out
}

// replay sends a case again with its key and returns the problems of the
// bar: a retry that answers otherwise, a 5xx or an error outside the
// envelope, or a write made again (the case's reads change).
func (r *run) replay(ctx context.Context, k *kase, first answer, seen map[string]string) []string {
	again, err := r.c.send(ctx, r.c.base, k.Req)
	if err != nil {
		return []string{"retried with its Idempotency-Key: no answer: " + err.Error()}
	}
	r.mu.Lock()
	r.replays++
	r.mu.Unlock()
	out := replayProblems(first, again)
	bar, _ := judge(k, again)
	for _, p := range bar {
		out = append(out, "retried with its Idempotency-Key: "+p)
	}
	for _, p := range k.Watch {
		now := r.fingerprint(ctx, p)
		if now != seen[p.String()] {
			out = append(out, fmt.Sprintf("retried with its Idempotency-Key: changed %s again", p))
		}
		seen[p.String()] = now
	}
	return out
}

// sendWrite is c.public for a write: sent with a fresh key, then again
// with it; a retry that answers otherwise is an error.
func (c *client) sendWrite(ctx context.Context, r request) (answer, error) {
	r.Header.Set(idemHeader, newIdemKey())
	first, err := c.send(ctx, c.base, r)
	if err != nil || !retried(first) {
		return first, err
	}
	again, err := c.send(ctx, c.base, r)
	if err != nil {
		return first, err
	}
	if p := replayProblems(first, again); len(p) > 0 {
		return first, fmt.Errorf("hostile: %s: %s", r, strings.Join(p, "; "))
	}
	return first, nil
}
