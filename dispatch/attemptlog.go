package dispatch

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"oficina/schema/webhooks"
)

// What an attempt sent and got is kept with its record for the delivery
// log (the company portal): the request headers as sent — the signature,
// never the secret —, the answer's status, headers and body, and the
// duration. What every attempt of the delivery sends alike is not kept
// again (issue 25): the body is the delivery's event body, and the
// constant headers (webhook-id, content-type, user-agent, content-length)
// are rebuilt from the event when the log is read (webhooks.Attempts), so
// an attempt keeps the headers that differ, its timestamp and signature.
// Bodies are capped at BodyCap; header values and their number are capped
// too, so a receiver cannot make the log grow.

// Caps of what an attempt keeps.
const (
	BodyCap        = 4 << 10
	headerValueCap = 512
	headerCountCap = 64
)

// attemptDetail is what one attempt sent and got.
type attemptDetail struct {
	start                 time.Time
	RequestHeaders        map[string][]string `json:"request_headers"`
	ResponseHeaders       map[string][]string `json:"response_headers,omitempty"`
	ResponseBody          *string             `json:"response_body,omitempty"`
	ResponseBodyTruncated bool                `json:"response_body_truncated"`
	DurationMS            int64               `json:"duration_ms"`
}

// startDetail notes the request about to be sent with body, a delivery of
// the event eventID.
func startDetail(req *http.Request, eventID string, body []byte) *attemptDetail {
	h := req.Header.Clone()
	h.Set("Content-Length", strconv.Itoa(len(body))) // as net/http sends it
	return &attemptDetail{start: time.Now(), RequestHeaders: webhooks.HeadersToKeep(keepHeaders(h), eventID, len(body))}
}

// finish notes the answer (nil without one): its headers and the first
// BodyCap bytes of its body, read from resp.Body before the caller drains
// the rest.
func (d *attemptDetail) finish(resp *http.Response) *attemptDetail {
	if resp != nil {
		d.ResponseHeaders = keepHeaders(resp.Header)
		b, _ := io.ReadAll(io.LimitReader(resp.Body, BodyCap+1))
		s, cut := keepText(b)
		d.ResponseBody, d.ResponseBodyTruncated = &s, cut
	}
	d.DurationMS = time.Since(d.start).Milliseconds()
	return d
}

// keepText is b as storable text (valid UTF-8, no NUL) cut at BodyCap.
func keepText(b []byte) (string, bool) {
	cut := len(b) > BodyCap
	if cut {
		b = b[:BodyCap]
	}
	return clean(string(b)), cut
}

func clean(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func keepHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, min(len(h), headerCountCap))
	for k, vs := range h {
		if len(out) == headerCountCap {
			break
		}
		kept := make([]string, 0, len(vs))
		for _, v := range vs {
			if len(v) > headerValueCap {
				v = v[:headerValueCap] + "…"
			}
			kept = append(kept, clean(v))
		}
		out[clean(k)] = kept
	}
	return out
}
