package webhooks_test

import (
	"testing"
	"time"

	"oficina/schema/apierr"
	"oficina/schema/webhooks"
)

// Issue 24: a rotation's grace period is bounded in seconds, before the
// conversion: 18446744074 s, multiplied into a Duration, wraps to 0.29 s.
func TestTheGracePeriodIsBoundedBeforeItBecomesADuration(t *testing.T) {
	t.Parallel()
	for s, want := range map[int64]time.Duration{0: 0, 3600: time.Hour, 604800: webhooks.MaxSecretGrace} {
		if got, err := webhooks.SecretGrace(s); err != nil || got != want {
			t.Errorf("%d s: %v %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []int64{-1, 604801, 18446744074, 1 << 62} {
		if got, err := webhooks.SecretGrace(s); apierr.As(err).Code != apierr.ValidationFailed {
			t.Errorf("%d s: %v %v, want 422 out_of_range", s, got, err)
		}
	}
}

// Issue 23 item 5: the formatted body only adds whitespace — keys keep
// their order, numbers their spelling — and there is none for a body that
// is not whole JSON.
func TestTheFormattedBodyOnlyAddsWhitespace(t *testing.T) {
	t.Parallel()
	body := func(s string) *webhooks.AttemptRow { return &webhooks.AttemptRow{RequestBody: &s} }
	got := body(`{"z":1.50,"a":{"y":[1e3,2],"b":"\u00e9"}}`).FormattedRequestBody()
	want := "{\n  \"z\": 1.50,\n  \"a\": {\n    \"y\": [\n      1e3,\n      2\n    ],\n    \"b\": \"\\u00e9\"\n  }\n}"
	if got != want {
		t.Errorf("formatted:\n%s\nwant:\n%s", got, want)
	}
	for _, r := range []*webhooks.AttemptRow{body(`{"id":"evt_1","da`), body(`not json`), {}} {
		if f := r.FormattedRequestBody(); f != "" {
			t.Errorf("%v: formatted %q, want none", r.RequestBody, f)
		}
	}
}
