package natsembed

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// logAdapter routes nats-server log calls to slog (or nowhere) and records
// the first fatal message. The server's own default logger exits the process
// on Fatalf; in-process we must turn that into an error instead.
type logAdapter struct {
	log *slog.Logger // nil: discard

	mu    sync.Mutex
	fatal error
}

func newLogAdapter(l *slog.Logger) *logAdapter { return &logAdapter{log: l} }

func (a *logAdapter) emit(level slog.Level, format string, v []any) {
	if a.log == nil {
		return
	}
	a.log.Log(context.Background(), level, fmt.Sprintf(format, v...), "component", "nats-server")
}

func (a *logAdapter) Noticef(format string, v ...any) { a.emit(slog.LevelInfo, format, v) }
func (a *logAdapter) Warnf(format string, v ...any)   { a.emit(slog.LevelWarn, format, v) }
func (a *logAdapter) Errorf(format string, v ...any)  { a.emit(slog.LevelError, format, v) }
func (a *logAdapter) Debugf(format string, v ...any)  { a.emit(slog.LevelDebug, format, v) }
func (a *logAdapter) Tracef(format string, v ...any)  { a.emit(slog.LevelDebug-4, format, v) }

func (a *logAdapter) Fatalf(format string, v ...any) {
	a.emit(slog.LevelError, format, v)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fatal == nil {
		a.fatal = fmt.Errorf("nats-server: %s", fmt.Sprintf(format, v...))
	}
}

// fatalErr returns the first fatal error the server reported, if any.
func (a *logAdapter) fatalErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fatal
}
