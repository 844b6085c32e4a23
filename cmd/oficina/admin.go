package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"oficina/ops/config"
)

const adminHelp = `usage: oficina admin [-admin-url URL] [-admin-token T] <action> [flags]

actions:
  company-create   -name N [-plan free|start|pleno|supra]
  member-create    -company ID -name N [-role OWNER|ADMIN|MEMBER|VIEWER] [-type org_member|technician|seller|assistant] [-permissions sales:read,sales:create]
  key-create       -company ID -member ID [-created-by ID] [-name N] -permissions a:b,c:d [-allowed-cidrs 10.0.0.0/8] [-expires-at 2027-01-01T00:00:00Z]
  key-rotate       -company ID -key ID [-grace-seconds 0]
  key-revoke       -company ID -key ID [-exposed]
  secrets rekey    [-company ID] [-limit 100]   re-seal every webhook secret under the first key of the
                   API's OFICINA_SECRET_KEYS, company by company; prints the count (docs/operating.md)
  request          METHOD PATH [JSON body]   any admin route, e.g. request GET /companies/co_…/members
` + portalHelp + `
The token defaults to $OFICINA_ADMIN_TOKEN, then <data-dir>/admin-token (written by oficina dev).
`

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var adminURL string
	cfg, fs, err := config.Parse("admin", args, func(fs *flag.FlagSet) {
		fs.StringVar(&adminURL, "admin-url", "", "admin API base URL (default http://<admin-addr>)")
		fs.Usage = func() { fmt.Fprint(stderr, adminHelp) }
	})
	if err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "help" {
		fmt.Fprint(stdout, adminHelp)
		return nil
	}
	if adminURL == "" {
		adminURL = "http://" + cfg.AdminAddr
	}
	token := cfg.AdminToken
	if token == "" {
		b, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin-token"))
		if err != nil {
			return errors.New("no admin token: set OFICINA_ADMIN_TOKEN or run oficina dev first")
		}
		token = strings.TrimSpace(string(b))
	}
	if rest[0] == "secrets" {
		return adminSecrets(ctx, adminURL+"/admin/v1", token, rest[1:], stdout)
	}
	if rest[0] == "portal-session" || rest[0] == "endpoint-recover" {
		return adminPortal(ctx, adminURL+"/admin/v1", token, rest[0], rest[1:], stdout)
	}
	method, path, body, err := adminAction(rest[0], rest[1:])
	if err != nil {
		return err
	}
	return adminCall(ctx, adminURL+"/admin/v1"+path, token, method, body, stdout)
}

func adminAction(action string, args []string) (method, path string, body any, err error) {
	fs := flag.NewFlagSet(action, flag.ContinueOnError)
	company := fs.String("company", "", "company id")
	name := fs.String("name", "", "name")
	plan := fs.String("plan", "", "plan")
	member := fs.String("member", "", "member id the key acts as")
	createdBy := fs.String("created-by", "", "member id creating the key")
	role := fs.String("role", "MEMBER", "member role")
	typ := fs.String("type", "org_member", "member type")
	perms := fs.String("permissions", "", "comma-separated permissions")
	cidrs := fs.String("allowed-cidrs", "", "comma-separated CIDRs")
	expires := fs.String("expires-at", "", "key expiry (YYYY-MM-DDThh:mm:ssZ)")
	key := fs.String("key", "", "key id")
	grace := fs.Int64("grace-seconds", 0, "rotation grace period; 0 stops the old key now")
	exposed := fs.Bool("exposed", false, "the key was publicly exposed")
	if action == "request" {
		if len(args) < 2 {
			return "", "", nil, errors.New("request METHOD PATH [JSON]")
		}
		var b any
		if len(args) > 2 {
			b = json.RawMessage(args[2])
		}
		return strings.ToUpper(args[0]), args[1], b, nil
	}
	if err := fs.Parse(args); err != nil {
		return "", "", nil, err
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	switch action {
	case "company-create":
		b := map[string]any{"name": *name}
		if *plan != "" {
			b["plan"] = *plan
		}
		return http.MethodPost, "/companies", b, nil
	case "member-create":
		mp := map[string][]string{}
		for _, p := range split(*perms) {
			m, a, _ := strings.Cut(p, ":")
			mp[m] = append(mp[m], a)
		}
		return http.MethodPost, "/companies/" + *company + "/members",
			map[string]any{"name": *name, "role": *role, "type": *typ, "permissions": mp}, nil
	case "key-create":
		b := map[string]any{"member_id": *member, "name": *name, "permissions": split(*perms), "allowed_cidrs": split(*cidrs)}
		if *createdBy != "" {
			b["created_by"] = *createdBy
		}
		if *expires != "" {
			t, err := time.Parse(time.RFC3339, *expires)
			if err != nil {
				return "", "", nil, fmt.Errorf("-expires-at: %w", err)
			}
			b["expires_at"] = t
		}
		return http.MethodPost, "/companies/" + *company + "/api_keys", b, nil
	case "key-rotate":
		return http.MethodPost, "/companies/" + *company + "/api_keys/" + *key + "/rotate",
			map[string]any{"grace_period_seconds": *grace}, nil
	case "key-revoke":
		reason := "revoked"
		if *exposed {
			reason = "exposed"
		}
		return http.MethodPost, "/companies/" + *company + "/api_keys/" + *key + "/revoke", map[string]any{"reason": reason}, nil
	}
	return "", "", nil, fmt.Errorf("unknown admin action %q (oficina admin help)", action)
}

func adminCall(ctx context.Context, url, token, method string, body any, stdout io.Writer) error {
	status, out, err := adminDo(ctx, url, token, method, body)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") == nil {
		out = append(pretty.Bytes(), '\n')
	}
	_, _ = stdout.Write(out)
	if status >= 300 {
		return fmt.Errorf("admin API answered %d %s", status, http.StatusText(status))
	}
	return nil
}

// adminDo sends one admin API request and returns the answer's status
// and body.
func adminDo(ctx context.Context, url, token, method string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}
