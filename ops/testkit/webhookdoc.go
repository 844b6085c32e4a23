package testkit

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"oficina/ops/proving/contract"
)

// documents caches compiled documents by content: parallel tests share one.
var documents sync.Map // [sha256.Size]byte → *contract.Document

// Document compiles an OpenAPI document, once per content.
func Document(raw []byte) (*contract.Document, error) {
	key := sha256.Sum256(raw)
	if d, ok := documents.Load(key); ok {
		return d.(*contract.Document), nil
	}
	d, err := contract.Load(raw)
	if err != nil {
		return nil, err
	}
	actual, _ := documents.LoadOrStore(key, d)
	return actual.(*contract.Document), nil
}

// webhookDocument is the published document (docs/openapi.json), for
// webhook bodies. Reading the file rather than building the public server
// keeps this layer free of HTTP; the drift test in http/public keeps the
// file equal to what the server serves.
var webhookDocument = sync.OnceValues(func() (*contract.Document, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			raw, err := os.ReadFile(filepath.Join(dir, "docs", "openapi.json"))
			if err != nil {
				return nil, err
			}
			return Document(raw)
		}
		if filepath.Dir(dir) == dir {
			return nil, errors.New("no go.mod above " + wd)
		}
	}
})

// CheckWebhook validates a webhook body (the event envelope) against the
// public document's webhooks entry for its type. A mismatch fails the
// test; it may be called from any goroutine (a receiver's handler).
// Receiver and EventLog call it on every body they see.
func CheckWebhook(t testing.TB, body []byte) {
	t.Helper()
	var ms []contract.Mismatch
	doc, err := webhookDocument()
	if err != nil {
		ms = []contract.Mismatch{{Operation: "webhook", Reason: "the document does not load: " + err.Error()}}
	} else {
		ms = doc.Webhook(body)
	}
	if len(ms) == 0 {
		return
	}
	ReportMismatches(t, ms, fmt.Sprintf("webhook body of %d bytes", len(body)))
}

// ReportMismatches fails t with the differences from the OpenAPI document.
func ReportMismatches(t testing.TB, ms []contract.Mismatch, note string) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("the answer differs from the OpenAPI document")
	if note != "" {
		sb.WriteString(" (" + note + ")")
	}
	for _, m := range ms {
		sb.WriteString("\n    " + m.String())
	}
	t.Error(sb.String())
}
