package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// NATS is how a process authenticates to NATS and secures the connection.
// At most one identity is used: a credentials file (JWT and NKey), an NKey
// seed file, a user and password, or a token. Password and Token are
// secrets: nothing logs them, and Redacted hides them.
type NATS struct {
	CredsFile  string // .creds file: user JWT and NKey seed (operator/JWT mode)
	NKeyFile   string // file holding a user NKey seed (SU…)
	User       string // user name (with Password)
	Password   string // secret
	Token      string // secret: token authentication
	CAFile     string // PEM CAs that sign the server's certificate (enables TLS)
	CertFile   string // client certificate (PEM) for mutual TLS, with KeyFile
	KeyFile    string // client key (PEM)
	ServerName string // TLS server name when it differs from the URL's host
	// InboxPrefix is where this process receives replies (JetStream API
	// answers, publish acks, fetched messages). Each user of the server
	// configuration in docs/nats/oficina.conf may subscribe only to its
	// own, so no user reads another's replies; empty takes the process's
	// default (_INBOX.api for serve, _INBOX.dispatch for dispatch, …).
	InboxPrefix string
}

func (n *NATS) settings() []setting {
	return []setting{
		{"nats-creds", "OFICINA_NATS_CREDS", "NATS credentials file (.creds: user JWT and NKey seed)", &n.CredsFile},
		{"nats-nkey", "OFICINA_NATS_NKEY", "file holding the NATS user's NKey seed", &n.NKeyFile},
		{"nats-user", "OFICINA_NATS_USER", "NATS user name (with OFICINA_NATS_PASSWORD)", &n.User},
		{"nats-password", "OFICINA_NATS_PASSWORD", "NATS password (secret; prefer the environment to the flag)", &n.Password},
		{"nats-token", "OFICINA_NATS_TOKEN", "NATS authentication token (secret; prefer the environment to the flag)", &n.Token},
		{"nats-ca", "OFICINA_NATS_CA", "PEM file of the CAs that sign the NATS server's certificate (turns TLS on)", &n.CAFile},
		{"nats-cert", "OFICINA_NATS_CERT", "client certificate (PEM) for mutual TLS with NATS", &n.CertFile},
		{"nats-key", "OFICINA_NATS_KEY", "client key (PEM) for mutual TLS with NATS", &n.KeyFile},
		{"nats-server-name", "OFICINA_NATS_SERVER_NAME", "TLS server name of NATS when it differs from the URL's host", &n.ServerName},
		{"nats-inbox-prefix", "OFICINA_NATS_INBOX_PREFIX", "subject prefix of this process's replies (default _INBOX.<role>: the server configuration lets each user read its own only)", &n.InboxPrefix},
	}
}

// Validate reports settings that cannot go together.
func (n NATS) Validate() error {
	var errs []error
	ids := 0
	for _, set := range []bool{n.CredsFile != "", n.NKeyFile != "", n.User != "" || n.Password != "", n.Token != ""} {
		if set {
			ids++
		}
	}
	if ids > 1 {
		errs = append(errs, errors.New("set one of OFICINA_NATS_CREDS, OFICINA_NATS_NKEY, OFICINA_NATS_USER/PASSWORD, OFICINA_NATS_TOKEN"))
	}
	if (n.User == "") != (n.Password == "") {
		errs = append(errs, errors.New("OFICINA_NATS_USER and OFICINA_NATS_PASSWORD go together"))
	}
	if (n.CertFile == "") != (n.KeyFile == "") {
		errs = append(errs, errors.New("OFICINA_NATS_CERT and OFICINA_NATS_KEY go together"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// TLS reports whether any TLS setting is present.
func (n NATS) TLS() bool {
	return n.CAFile != "" || n.CertFile != "" || n.ServerName != ""
}

// RedactURLs returns a NATS_URL (a comma-separated list) with every
// password or token in its userinfo replaced, fit for errors and logs.
func RedactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		switch {
		case err != nil:
			if strings.Contains(p, "@") {
				parts[i] = "<unparsable URL with userinfo>"
			}
		case u.User != nil:
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			} else {
				u.User = url.User("xxxxx") // a bare userinfo is a token
			}
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
