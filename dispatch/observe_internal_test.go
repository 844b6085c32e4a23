package dispatch

import "testing"

// Issue 18 item 4: every attempt falls in one of a fixed set of outcomes,
// whatever words the destination guard gives its failure.
func TestAttemptsFallInAFixedSetOfOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    attemptResult
		want string
	}{
		{attemptResult{status: 200}, OutcomeSucceeded},
		{attemptResult{status: 299}, OutcomeSucceeded},
		{attemptResult{status: 301, err: "redirect_not_followed"}, OutcomeFailedStatus},
		{attemptResult{status: 410}, OutcomeFailedStatus},
		{attemptResult{status: 503}, OutcomeFailedStatus},
		{attemptResult{err: "timeout"}, OutcomeTimeout},
		{attemptResult{err: "tls_error: unknown_authority"}, OutcomeTLSError},
		{attemptResult{err: "tls_error: hostname_mismatch"}, OutcomeTLSError},
		{attemptResult{err: "destination_refused: private_address"}, OutcomeDestinationRefused},
		{attemptResult{err: "invalid_url"}, OutcomeDestinationRefused},
		{attemptResult{err: "connection_refused"}, OutcomeRequestFailed},
		{attemptResult{err: "dns_error"}, OutcomeRequestFailed},
		{attemptResult{err: "invalid_secret"}, OutcomeRequestFailed},
		{attemptResult{err: "something new"}, OutcomeRequestFailed},
	} {
		if got := attemptOutcome(tc.r); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.r, got, tc.want)
		}
	}
}
