// Package docsui serves the API reference at /docs/: Redoc, embedded in the
// binary at a pinned version (assets/, see PinnedRedoc), rendering
// /openapi.json, and the site's /favicon.ico. No third-party script or
// style runs there: every one comes from this server, and a strict
// Content-Security-Policy says so to the browser. The one exception is an
// image, Redoc's own logo, which its bundle loads from RedocLogo.
package docsui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
)

// PinnedRedoc is the embedded viewer: npm redoc@2.5.1, bundles/redoc.standalone.js
// (MIT, assets/REDOC-LICENSE), and its SHA-256; a test fails when the file
// and the pin differ. make docs-ui refreshes it from the npm registry.
const (
	PinnedRedoc       = "redoc@2.5.1"
	PinnedRedocSHA256 = "2d8d13e94b5a21011cc6f8260d87ca475d0f6f2faed16dd12e7394dfa3bb05b8"
)

//go:embed assets
var assets embed.FS

// RedocLogo is the image the pinned bundle shows in its sidebar ("API docs
// by Redocly"); the address is written in the bundle, so the policy names
// it rather than blocking it with a console error on every load.
const RedocLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg"

// CSP allows this origin only — the viewer's script, its inline styles
// (Redoc styles with generated <style> elements), the document it fetches
// and the search worker it starts from a blob — and, as an image, that
// one file of Redoc's (no other path of its host). Referrer-Policy keeps
// the page's address from it.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: " + RedocLogo + "; " +
	"font-src 'self'; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Oficina public API</title></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/docs/redoc.standalone.js"></script></body></html>
`

// Handler serves /docs/ (the page) and /docs/redoc.standalone.js.
func Handler() http.Handler {
	sub, _ := fs.Sub(assets, "assets") // the embedded directory exists
	files := http.StripPrefix("/docs/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.URL.Path == "/docs/" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write([]byte(page))
			return
		}
		h.Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	})
}

// Favicon serves /favicon.ico, which browsers ask for on every page of the
// public listener (/docs/, the portal): a 32×32 icon, embedded.
func Favicon() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		b, _ := assets.ReadFile("assets/favicon.ico") // embedded
		h := w.Header()
		h.Set("Content-Type", "image/x-icon")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(b)
	})
}

// ViewerSHA256 is the SHA-256 of the embedded viewer, hex.
func ViewerSHA256() (string, error) {
	b, err := assets.ReadFile("assets/redoc.standalone.js")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
