package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"oficina/ops/testkit"
	"oficina/ops/testkit/httpkit"
	"oficina/schema/secretbox"
	"oficina/schema/webhooks"
	"oficina/tenant"
)

// `oficina admin secrets rekey -company ID` re-seals the company's rows
// under the API's first key and prints the count; a row under a key the
// ring lacks is named (company, endpoint, key id) and makes it fail, so an
// operator does not drop a key still in use.
func TestAdminSecretsRekeyPrintsCountAndRowsLeft(t *testing.T) {
	t.Parallel()
	ring, err := secretbox.ParseKeyring(testkit.NewKeyEntry(t, "k2") + "," + testkit.SecretKeys)
	if err != nil {
		t.Fatal(err)
	}
	api := httpkit.NewAPI(t, httpkit.APIOptions{Secrets: ring})
	co := testkit.NewCompany(t, tenant.CompanyInput{})
	gone, err := secretbox.ParseKeyring(testkit.NewKeyEntry(t, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	var lost string
	for _, r := range []*secretbox.Keyring{testkit.Keyring(t), testkit.Keyring(t), gone} {
		co.Tx(t, func(ctx context.Context, tx bun.Tx) error {
			e, err := webhooks.Create(ctx, tx, co.Company.ID, webhooks.WebhookEndpointCreate{URL: "https://hooks.example.com/",
				Events: []webhooks.EventName{"*"}}, webhooks.Subscriber{MemberID: co.Owner.ID}, func([]string) error { return nil },
				testkit.AnyURL{}, r, time.Now())
			if e != nil {
				lost = e.ID
			}
			return err
		})
	}
	var out bytes.Buffer
	args := []string{"admin", "-admin-url", api.AdminURL, "-admin-token", api.AdminToken, "secrets", "rekey", "-company", co.Company.ID}
	err = run(context.Background(), args, &out, &out)
	want := fmt.Sprintf("2 endpoint(s) of 1 company(ies) re-sealed under key k2\nnot re-sealed: company %s endpoint %s, key \"gone\": unknown_key\n",
		co.Company.ID, lost)
	if err == nil || out.String() != want || !strings.Contains(err.Error(), "put their key back") {
		t.Fatalf("rekey: %v\n%s\nwant\n%s", err, out.String(), want)
	}
	out.Reset()
	if err := run(context.Background(), append(args, "-limit", "0"), &out, &out); err == nil || !strings.Contains(out.String(), "limit") {
		t.Errorf("limit 0: %v %s", err, out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"admin", "-admin-url", api.AdminURL, "-admin-token", api.AdminToken, "secrets", "rotate"}, &out, &out); err == nil {
		t.Error("unknown secrets action accepted")
	}
}
