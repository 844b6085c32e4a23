package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"strings"
	"time"

	outbox "oficina/schema/mail"
)

// Transport sends one message.
type Transport interface {
	Send(ctx context.Context, m *outbox.Message) error
}

// LogTransport writes messages to the log instead of sending them (dev, or
// no SMTP configured).
type LogTransport struct{ Log *slog.Logger }

// Send logs m.
func (t LogTransport) Send(ctx context.Context, m *outbox.Message) error {
	log := t.Log
	if log == nil {
		log = slog.Default()
	}
	log.InfoContext(ctx, "mail (not sent: no SMTP configured)", "id", m.ID, "company", m.CompanyID,
		"kind", m.Kind, "to", m.To, "subject", m.Subject, "body", m.Body)
	return nil
}

// SMTP sends through an SMTP server, with STARTTLS when the server offers
// it and PLAIN authentication when a username is set.
type SMTP struct {
	Addr     string // host:port
	Username string
	Password string
	From     string
	Timeout  time.Duration // whole conversation; 0 means 30s
}

// Send delivers m.
func (s SMTP) Send(ctx context.Context, m *outbox.Message) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, _, err := net.SplitHostPort(s.Addr)
	if err != nil {
		return fmt.Errorf("mail: smtp address %q: %w", s.Addr, err)
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("mail: dial %s: %w", s.Addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return fmt.Errorf("mail: smtp hello: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("mail: starttls: %w", err)
		}
	}
	if s.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, host)); err != nil {
			return fmt.Errorf("mail: auth: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("mail: MAIL FROM: %w", err)
	}
	for _, to := range m.To {
		if err := c.Rcpt(to); err != nil {
			return fmt.Errorf("mail: RCPT TO %s: %w", to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("mail: DATA: %w", err)
	}
	if _, err := w.Write(Format(s.From, m, time.Now())); err != nil {
		return fmt.Errorf("mail: write: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("mail: end of data: %w", err)
	}
	return c.Quit()
}

// Format renders m as an RFC 5322 message: UTF-8 text, quoted-printable,
// encoded subject.
func Format(from string, m *outbox.Message, now time.Time) []byte {
	var b bytes.Buffer
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", from)
	hdr("To", strings.Join(m.To, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	hdr("Date", now.UTC().Format(time.RFC1123Z))
	hdr("Message-ID", "<"+m.ID+"@oficina>")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", `text/plain; charset="utf-8"`)
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(m.Body, "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}
