// Package config is Oficina's configuration: one struct with the spec's
// defaults, overridden by OFICINA_* environment variables (DATABASE_URL and
// NATS_URL keep their conventional names) and then by command-line flags.
package config

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"oficina/tenant/ratelimit"
)

// Config is every setting of every subcommand.
type Config struct {
	HTTPAddr   string // public API listener
	AdminAddr  string // admin API listener (keep it private)
	AdminToken string // operator token of the admin API (32 bytes or more)
	// MetricsRequireToken puts /metrics behind the operator token.
	MetricsRequireToken bool
	// MetricsAddr is a listener serving only /metrics: how `oficina
	// dispatch` and `oficina relay` are scraped (empty: none); serve and
	// dev also keep /metrics on the admin listener.
	MetricsAddr string
	// Pprof serves Go's profiles (/debug/pprof/) on MetricsAddr, always
	// behind the operator token: how a profile of a running process is
	// taken (docs/performance.md).
	Pprof            bool
	DatabaseURL      string        // owner URL: migrations, database creation
	AppDBPassword    string        // password of the oficina_app role, if any
	WorkerDBPassword string        // password of the oficina_worker role (relay, dispatch, sweepers), if any
	DBMaxConns       int           // connection pool size
	NATSURL          string        // external NATS (2.12+); empty in dev = embedded
	NATS             NATS          // NATS credentials and TLS (nats.go)
	NATSPort         int           // embedded NATS client port (dev)
	DataDir          string        // ./var: embedded NATS store, admin token, bench output
	LogLevel         string        // debug, info, warn, error
	AuthCacheTTL     time.Duration // upper bound on a cached principal's age
	// RateLimitTimeout bounds one round trip to the shared rate-limit
	// budget; past it the request is decided by this process's share.
	RateLimitTimeout time.Duration
	// TrustedProxies lists the CIDRs of the proxies in front of the API:
	// X-Forwarded-For is read only from them (empty: never).
	TrustedProxies  string
	ShutdownTimeout time.Duration // graceful shutdown budget
	StreamReplicas  int           // JetStream replicas (1 dev, 3 cluster)
	EventRetention  time.Duration // events and delivery log kept this long
	// AllowPrivateDestinations lists CIDRs webhook URLs may use although
	// not public (tests, dev); empty in production.
	AllowPrivateDestinations string
	// ExtraCAFile is a PEM file of CAs trusted for webhook receivers in
	// addition to the system's (tests, dev).
	ExtraCAFile  string
	SMTPAddr     string // host:port; empty logs mail instead
	SMTPUsername string
	SMTPPassword string
	MailFrom     string

	// PublicURL is the public listener's base URL as clients reach it
	// (https://api.example.com): the portal's one-time links start with it.
	// Empty: the address the listener has.
	PublicURL string
	// PortalFrameAncestors lists the origins allowed to embed the company
	// portal in a frame (space- or comma-separated); empty: none.
	PortalFrameAncestors string

	// SecretKeys is the key ring sealing the webhook signing secrets:
	// "id:base64key,…", the first seals, all open (schema/secretbox).
	// Environment only, so it shows in no process list or -h output.
	SecretKeys string
}

// Default returns the defaults.
func Default() Config {
	return Config{
		HTTPAddr:         ":8080",
		AdminAddr:        "127.0.0.1:8081",
		DatabaseURL:      "postgres://postgres@127.0.0.1:5432/oficina?sslmode=disable",
		DBMaxConns:       32,
		NATSPort:         14222,
		DataDir:          "var",
		LogLevel:         "info",
		AuthCacheTTL:     5 * time.Second,
		RateLimitTimeout: ratelimit.DefaultTimeout,
		ShutdownTimeout:  15 * time.Second,
		StreamReplicas:   1,
		EventRetention:   30 * 24 * time.Hour,
		MailFrom:         "Oficina <no-reply@oficina.dev>",
	}
}

// setting is one setting; without flag it is read from the environment
// only (secrets: a flag's value shows in the process list and in -h).
type setting struct {
	flag, env, usage string
	ptr              any
}

func (c *Config) settings() []setting {
	return append([]setting{
		{"http-addr", "OFICINA_HTTP_ADDR", "public API listen address", &c.HTTPAddr},
		{"admin-addr", "OFICINA_ADMIN_ADDR", "admin API listen address", &c.AdminAddr},
		{"admin-token", "OFICINA_ADMIN_TOKEN", "admin API operator token, at least 32 bytes (dev: generated into <data-dir>/admin-token)", &c.AdminToken},
		{"metrics-addr", "OFICINA_METRICS_ADDR", "listen address serving only /metrics, e.g. :9464 (dispatch and relay have no other; empty: none)", &c.MetricsAddr},
		{"metrics-require-token", "OFICINA_METRICS_REQUIRE_TOKEN", "serve /metrics only with the operator token (Authorization: Bearer)", &c.MetricsRequireToken},
		{"pprof", "OFICINA_PPROF", "also serve Go's profiles (/debug/pprof/) on the metrics listener (OFICINA_METRICS_ADDR)", &c.Pprof},
		{"database-url", "DATABASE_URL", "PostgreSQL URL of the database owner", &c.DatabaseURL},
		{"app-db-password", "OFICINA_APP_DB_PASSWORD", "password of the oficina_app role (requests)", &c.AppDBPassword},
		{"worker-db-password", "OFICINA_WORKER_DB_PASSWORD", "password of the oficina_worker role (relay, dispatch, sweepers)", &c.WorkerDBPassword},
		{"db-max-conns", "OFICINA_DB_MAX_CONNS", "database pool size", &c.DBMaxConns},
		{"nats-url", "NATS_URL", "NATS server URL (2.12+); empty in dev starts an embedded one", &c.NATSURL},
		{"nats-port", "OFICINA_NATS_PORT", "embedded NATS client port (dev)", &c.NATSPort},
		{"data-dir", "OFICINA_DATA_DIR", "directory for local state", &c.DataDir},
		{"log-level", "OFICINA_LOG_LEVEL", "debug, info, warn or error", &c.LogLevel},
		{"auth-cache-ttl", "OFICINA_AUTH_CACHE_TTL", "longest reuse of a cached key lookup", &c.AuthCacheTTL},
		{"ratelimit-timeout", "OFICINA_RATELIMIT_TIMEOUT", "longest wait for the shared rate-limit budget before this process decides by its share", &c.RateLimitTimeout},
		{"trusted-proxies", "OFICINA_TRUSTED_PROXIES", "comma-separated CIDRs of the proxies in front of the API; X-Forwarded-For is read from them only, from the right", &c.TrustedProxies},
		{"shutdown-timeout", "OFICINA_SHUTDOWN_TIMEOUT", "graceful shutdown budget", &c.ShutdownTimeout},
		{"stream-replicas", "OFICINA_STREAM_REPLICAS", "JetStream stream replicas", &c.StreamReplicas},
		{"event-retention", "OFICINA_EVENT_RETENTION", "how long events and the delivery log are kept", &c.EventRetention},
		{"extra-ca-file", "OFICINA_EXTRA_CA_FILE", "PEM file of extra CAs trusted for webhook receivers (tests, dev only)", &c.ExtraCAFile},
		{"allow-private-destinations", "OFICINA_ALLOW_PRIVATE_DESTINATIONS", "comma-separated CIDRs webhook URLs may use although not public (tests, dev only)", &c.AllowPrivateDestinations},
		{"smtp-addr", "OFICINA_SMTP_ADDR", "SMTP server host:port; empty writes mail to the log", &c.SMTPAddr},
		{"smtp-username", "OFICINA_SMTP_USERNAME", "SMTP username (PLAIN auth)", &c.SMTPUsername},
		{"smtp-password", "OFICINA_SMTP_PASSWORD", "SMTP password", &c.SMTPPassword},
		{"mail-from", "OFICINA_MAIL_FROM", "From address of mail to owners and admins", &c.MailFrom},
		{"public-url", "OFICINA_PUBLIC_URL", "base URL of the public listener as clients reach it (portal links); empty: the listener's address", &c.PublicURL},
		{"portal-frame-ancestors", "OFICINA_PORTAL_FRAME_ANCESTORS", "origins allowed to embed the webhook portal in a frame, e.g. https://app.example.com (docs/portal.md)", &c.PortalFrameAncestors},
		{"", "OFICINA_SECRET_KEYS", "key ring sealing webhook signing secrets: id:base64key,… (first seals, all open)", &c.SecretKeys},
	}, c.NATS.settings()...)
}

// removed are settings that are gone, with what replaces them: starting
// with one set is an error, not a silent change of behaviour.
var removed = map[string]string{
	"OFICINA_TRUST_PROXY": "OFICINA_TRUST_PROXY is gone: it trusted the first X-Forwarded-For entry, which the " +
		"client writes; set OFICINA_TRUSTED_PROXIES to the CIDRs of your proxies instead",
}

// Load applies the environment (getenv, usually os.Getenv) to c.
func (c *Config) Load(getenv func(string) string) error {
	for env, why := range removed {
		if getenv(env) != "" {
			return fmt.Errorf("config: %s", why)
		}
	}
	for _, s := range c.settings() {
		v := getenv(s.env)
		if v == "" {
			continue
		}
		if err := set(s.ptr, v); err != nil {
			return fmt.Errorf("config: %s: %w", s.env, err)
		}
	}
	return nil
}

// Register adds a flag per setting, defaulting to the current values.
func (c *Config) Register(fs *flag.FlagSet) {
	for _, s := range c.settings() {
		if s.flag == "" {
			continue
		}
		usage := s.usage + " (env " + s.env + ")"
		switch p := s.ptr.(type) {
		case *string:
			fs.StringVar(p, s.flag, *p, usage)
		case *int:
			fs.IntVar(p, s.flag, *p, usage)
		case *bool:
			fs.BoolVar(p, s.flag, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, s.flag, *p, usage)
		}
		if secrets[s.env] {
			fs.Lookup(s.flag).DefValue = "" // -h must not print a secret set in the environment
		}
	}
}

// secrets are the settings -h never shows the value of.
var secrets = map[string]bool{"OFICINA_ADMIN_TOKEN": true, "OFICINA_APP_DB_PASSWORD": true, "OFICINA_SMTP_PASSWORD": true,
	"OFICINA_NATS_PASSWORD": true, "OFICINA_NATS_TOKEN": true}

func set(ptr any, v string) error {
	switch p := ptr.(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		*p = b
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		*p = d
	}
	return nil
}

// Prefixes parses a comma-separated list of CIDRs; a bare address is its
// own /32 or /128. setting names the list in errors.
func Prefixes(setting, list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			a, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("config: %s: %q: %w", setting, f, err)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Parse builds the config of a subcommand: defaults, environment, flags.
func Parse(name string, args []string, extra func(*flag.FlagSet)) (Config, *flag.FlagSet, error) {
	c := Default()
	if err := c.Load(os.Getenv); err != nil {
		return c, nil, err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c.Register(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return c, fs, err
	}
	return c, fs, c.NATS.Validate()
}
