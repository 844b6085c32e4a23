package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"

	"oficina/http/admin"
)

// adminSecrets is `oficina admin secrets rekey`: it has the API re-seal
// every webhook secret under the first key of its ring, a page of
// companies per call (each company in its own transaction), until none is
// left, and prints the count. Running it again re-seals nothing more.
func adminSecrets(ctx context.Context, base, token string, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "rekey" {
		return errors.New("usage: oficina admin secrets rekey [-company ID] [-limit 100]")
	}
	fs := flag.NewFlagSet("secrets rekey", flag.ContinueOnError)
	company := fs.String("company", "", "re-seal this company's endpoints only")
	limit := fs.Int("limit", 100, "companies per call (1 to 1000)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var total admin.SecretsRekeyed
	after := ""
	for {
		body := map[string]any{"after": after, "limit": *limit}
		if *company != "" {
			body["company_id"] = *company
		}
		status, out, err := adminDo(ctx, base+"/secrets/rekey", token, http.MethodPost, body)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			_, _ = stdout.Write(append(out, '\n'))
			return fmt.Errorf("admin API answered %d %s", status, http.StatusText(status))
		}
		var page admin.SecretsRekeyed
		if err := json.Unmarshal(out, &page); err != nil {
			return fmt.Errorf("secrets rekey: %w", err)
		}
		total.KeyID = page.KeyID
		total.Companies += page.Companies
		total.Endpoints += page.Endpoints
		total.Failed = append(total.Failed, page.Failed...)
		if !page.HasMore {
			break
		}
		after = page.NextAfter
	}
	fmt.Fprintf(stdout, "%d endpoint(s) of %d company(ies) re-sealed under key %s\n", total.Endpoints, total.Companies, total.KeyID)
	for _, f := range total.Failed {
		fmt.Fprintf(stdout, "not re-sealed: company %s endpoint %s, key %q: %s\n", f.CompanyID, f.EndpointID, f.KeyID, f.Reason)
	}
	if n := len(total.Failed); n > 0 {
		return fmt.Errorf("%d endpoint(s) left as they were: put their key back in OFICINA_SECRET_KEYS (after the first) and run rekey again", n)
	}
	return nil
}
