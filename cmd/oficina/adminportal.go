package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"time"
)

const portalHelp = `  portal-session create  -company ID -member ID [-capabilities manage_endpoints,view_secret,recover] [-ttl 1h]
                         open the company's webhook portal as an owner or admin: prints the one-time link
  portal-session list    -company ID
  portal-session revoke  -company ID -session ID
  endpoint-recover       -company ID -endpoint ID -since 2026-03-01T00:00:00Z [-until T] [-dry-run]
                         resend the endpoint's failed deliveries of the window (docs/portal.md)
`

// adminPortal is `oficina admin portal-session …` and `endpoint-recover`.
func adminPortal(ctx context.Context, base, token, action string, args []string, stdout io.Writer) error {
	sub := ""
	if action == "portal-session" {
		if len(args) == 0 {
			return errors.New("usage: oficina admin portal-session create|list|revoke [flags]")
		}
		sub, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet(action+" "+sub, flag.ContinueOnError)
	company := fs.String("company", "", "company id")
	member := fs.String("member", "", "the owner or admin the session acts as")
	caps := fs.String("capabilities", "", "comma-separated capabilities (default read_only)")
	ttl := fs.Duration("ttl", time.Hour, "session lifetime (at most 168h)")
	session := fs.String("session", "", "session id")
	endpoint := fs.String("endpoint", "", "endpoint id")
	since := fs.String("since", "", "window start (YYYY-MM-DDThh:mm:ssZ)")
	until := fs.String("until", "", "window end (default now)")
	dry := fs.Bool("dry-run", false, "only count")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *company == "" {
		return errors.New("-company is required")
	}
	co := base + "/companies/" + *company
	switch action + " " + sub {
	case "portal-session create":
		body := map[string]any{"member_id": *member, "ttl_seconds": int64(ttl.Seconds())}
		if *caps != "" {
			body["capabilities"] = strings.Split(*caps, ",")
		}
		return adminCall(ctx, co+"/portal_sessions", token, http.MethodPost, body, stdout)
	case "portal-session list":
		return adminCall(ctx, co+"/portal_sessions", token, http.MethodGet, nil, stdout)
	case "portal-session revoke":
		return adminCall(ctx, co+"/portal_sessions/"+*session+"/revoke", token, http.MethodPost, map[string]any{}, stdout)
	case "endpoint-recover ":
		body := map[string]any{"since": *since, "dry_run": *dry}
		if *until != "" {
			body["until"] = *until
		}
		return adminCall(ctx, co+"/webhook_endpoints/"+*endpoint+"/recover", token, http.MethodPost, body, stdout)
	}
	return errors.New("usage: oficina admin portal-session create|list|revoke, or endpoint-recover (oficina admin help)")
}
