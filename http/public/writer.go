package public

import "net/http"

// lazyWriter holds the status until the first body byte so handlers (and
// fuego, which writes the status early) can still set headers, and it drops
// framework headers that say nothing to integrators.
type lazyWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *lazyWriter) WriteHeader(code int) {
	if !w.wrote && w.status == 0 {
		w.status = code
	}
}

func (w *lazyWriter) Write(b []byte) (int, error) {
	w.flushHeader()
	return w.ResponseWriter.Write(b)
}

func (w *lazyWriter) flushHeader() {
	if w.wrote {
		return
	}
	w.wrote = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	h := w.ResponseWriter.Header()
	h.Del("X-Powered-By")
	h.Del("Server-Timing")
	h.Del("Trailer")
	h.Del("X-Request-Id")
	w.ResponseWriter.WriteHeader(w.status)
}

// flush sends the status of a response without a body.
func (w *lazyWriter) flush() { w.flushHeader() }
