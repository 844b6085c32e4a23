package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/streams"
)

// The warning before a client certificate expires (issue 27 item 2):
// nothing happens to an endpoint when time passes, so a routine notices it
// (ops/stack runs it with the other routines, every quarter hour). Each
// company's run is a write unit: the endpoints it warns are marked
// (client_certificate_warned_at) in the transaction that records their
// events, so a certificate is warned about once, whichever process runs
// the routine and however often; setting a new certificate clears the mark.

// CertificateUnit is the write unit of the warning for one company, run at
// now. Oficina itself reports: the events carry the endpoint whole.
func CertificateUnit(companyID string, now time.Time) streams.Unit {
	return streams.Unit{CompanyID: companyID, Actor: streams.Actor{Kind: streams.ActorSystem}, At: now}
}

// WarnExpiringCertificates records webhook_endpoint.client_certificate_expiring
// for each endpoint of w's company whose client certificate expires before
// w.At + CertificateWarning and has not been warned about, and marks it;
// it returns how many it warned.
func WarnExpiringCertificates(ctx context.Context, w *streams.Write) (int, error) {
	var es []Row
	err := w.Tx.NewUpdate().Model((*Row)(nil)).Set("client_certificate_warned_at = ?", w.At).
		Where("client_certificate_expires_at < ?", w.At.Add(CertificateWarning)).
		Where("client_certificate_warned_at IS NULL").Returning("*").Scan(ctx, &es)
	if err != nil {
		return 0, fmt.Errorf("webhooks: expiring client certificates: %w", err)
	}
	if len(es) == 0 {
		return 0, nil
	}
	slices.SortFunc(es, func(a, b Row) int { return strings.Compare(a.ID, b.ID) })
	warned := make([]*Row, len(es))
	for i := range es {
		warned[i] = &es[i]
	}
	return len(es), recordEndpoint(ctx, w, EventEndpointCertificateExpiring, warned...)
}

// WarnExpiringCertificatesAll runs WarnExpiringCertificates at now for every
// company with a certificate to warn about (found through workers, the
// cross-company role), each company as its own write unit of wr; it
// returns how many endpoints it warned.
func WarnExpiringCertificatesAll(ctx context.Context, wr *streams.Writer, workers bun.IDB, now time.Time) (int, error) {
	var companies []string
	err := workers.NewRaw("SELECT oficina_expiring_certificate_companies(?)", now.Add(CertificateWarning)).Scan(ctx, &companies)
	if err != nil {
		return 0, fmt.Errorf("webhooks: companies with expiring client certificates: %w", err)
	}
	total := 0
	for _, co := range companies {
		err := wr.Run(ctx, CertificateUnit(co, now), func(ctx context.Context, w *streams.Write) error {
			n, err := WarnExpiringCertificates(ctx, w)
			total += n
			return err
		})
		if err != nil {
			return total, fmt.Errorf("webhooks: company %s: %w", co, err)
		}
	}
	return total, nil
}
