package public_test

import (
	"testing"

	"oficina/ops/testkit"
)

func TestZZSerialCreates(t *testing.T) {
	api := testkit.NewAPI(t, testkit.APIOptions{})
	b := &testing.B{}
	_ = b
	co := newSaleBenchCompanyT(t, api)
	for range 20 {
		r := api.Do(t, testkit.Req{Method: "POST", Path: "/sales", Key: co.key, Body: co.body})
		if r.Status != 201 {
			t.Fatal(r.Status)
		}
	}
}
