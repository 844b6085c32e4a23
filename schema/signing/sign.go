package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names and fixed values of a delivery (spec 6.2), spelt as in the
// Standard Webhooks specification.
const (
	HeaderID          = "webhook-id"
	HeaderTimestamp   = "webhook-timestamp"
	HeaderSignature   = "webhook-signature"
	HeaderContentType = "content-type"
	HeaderUserAgent   = "user-agent"

	ContentType = "application/json"
	// UserAgent is "a product token followed by -Webhooks/1.0" (spec 6.2).
	UserAgent = "Oficina-Webhooks/1.0"

	// signatureVersion tags the HMAC-SHA256 scheme; "v1a" (asymmetric) is not used.
	signatureVersion = "v1"
)

// ErrNoKeys is returned by Headers when there is no key to sign with.
var ErrNoKeys = errors.New("signing: no signing key")

// Sign returns the webhook-signature header value for one delivery attempt:
// "v1,<base64 HMAC-SHA256 of {msgID}.{ts unix seconds}.{body}>" for each key,
// in the order given, separated by single spaces. Several keys are used only
// during a rotation overlap, so a receiver holding either secret accepts the
// delivery. With no keys the result is empty; Headers refuses that case.
//
// ts is truncated to whole seconds, as webhook-timestamp carries Unix seconds.
func Sign(keys [][]byte, msgID string, ts time.Time, body []byte) string {
	if len(keys) == 0 {
		return ""
	}
	// Build the signed content once and reuse it for every key; the body can be
	// up to 256 KB and must not be copied per key.
	content := make([]byte, 0, len(msgID)+1+20+1+len(body))
	content = append(content, msgID...)
	content = append(content, '.')
	content = strconv.AppendInt(content, ts.Unix(), 10)
	content = append(content, '.')
	content = append(content, body...)

	var b strings.Builder
	sigLen := base64.StdEncoding.EncodedLen(sha256.Size)
	b.Grow(len(keys) * (len(signatureVersion) + 1 + sigLen + 1))
	sum := make([]byte, 0, sha256.Size)
	for i, key := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		mac := hmac.New(sha256.New, key)
		mac.Write(content) // hash.Hash.Write never returns an error
		b.WriteString(signatureVersion)
		b.WriteByte(',')
		b.WriteString(base64.StdEncoding.EncodeToString(mac.Sum(sum[:0])))
	}
	return b.String()
}

// Headers returns the complete header set of one delivery attempt. msgID is the
// event id (the same value as the body's "id"), ts the time of this attempt.
// It fails when there is no key or a key is empty, because an unsigned or
// empty-key delivery must never leave the dispatcher.
func Headers(keys [][]byte, msgID string, ts time.Time, body []byte) (http.Header, error) {
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	for i, k := range keys {
		if len(k) == 0 {
			return nil, fmt.Errorf("%w: key %d is empty", ErrNoKeys, i)
		}
	}
	if msgID == "" {
		return nil, errors.New("signing: empty message id")
	}
	// Set canonicalises the names (Webhook-Id, …) so that Header.Get works,
	// which is what every receiver library uses; header names are
	// case-insensitive on the wire.
	h := make(http.Header, 5)
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign(keys, msgID, ts, body))
	h.Set(HeaderContentType, ContentType)
	h.Set(HeaderUserAgent, UserAgent)
	return h, nil
}
