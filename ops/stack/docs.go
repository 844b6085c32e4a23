package stack

import (
	"io"
	"net/http"
)

// docsUI serves a page that renders /openapi.json. The viewer script comes
// from a CDN in the reader's browser; the server itself fetches nothing.
func docsUI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Oficina public API</title>
<script src="https://unpkg.com/@stoplight/elements/web-components.min.js"></script>
<link rel="stylesheet" href="https://unpkg.com/@stoplight/elements/styles.min.css"></head>
<body><elements-api apiDescriptionUrl="/openapi.json" router="hash" layout="sidebar"></elements-api></body></html>
`)
	})
}
