package webhooks

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"oficina/schema/mail"
	"oficina/streams"
	"oficina/tenant"
)

// Mail kinds.
const (
	MailEndpointCreated      = "webhook_endpoint_created"
	MailEmergencyKeyRotation = "webhook_emergency_key_rotation"
)

// mailCreated tells the owners and admins about a new endpoint (spec 6.7).
func mailCreated(ctx context.Context, tx bun.IDB, e *Row, sub Subscriber, now time.Time) error {
	who := sub.MemberID
	if m, err := tenant.GetMember(ctx, tx, sub.MemberID); err == nil {
		who = fmt.Sprintf("%s (%s)", m.Name, m.ID)
	}
	via := "painel"
	if sub.KeyID != "" {
		via = "API, chave " + sub.KeyID
	}
	body := fmt.Sprintf("Um novo endpoint de webhook foi cadastrado na sua empresa.\n\n"+
		"Endereço: %s\nEventos: %s\nCadastrado por: %s, via %s\nEndpoint: %s\n\n"+
		"Se você não reconhece este cadastro, desative o endpoint e revogue a chave usada.\n",
		e.URL, strings.Join(e.Events, ", "), who, via, e.ID)
	_, err := mail.ToManagers(ctx, tx, e.CompanyID, MailEndpointCreated,
		"Novo endpoint de webhook: "+host(e.URL), body, now)
	return err
}

// mailEmergency lists the URL domains of the endpoints disabled by an
// emergency key rotation or revocation (spec 3.3).
func mailEmergency(ctx context.Context, tx bun.IDB, companyID, keyID string, urls []string, now time.Time) error {
	domains := make([]string, 0, len(urls))
	for _, u := range urls {
		domains = append(domains, host(u))
	}
	slices.Sort(domains)
	domains = slices.Compact(domains)
	body := fmt.Sprintf("A chave de API %s foi substituída ou revogada com efeito imediato. "+
		"Os endpoints de webhook cadastrados com ela foram desativados (motivo: %s) "+
		"e não recebem mais eventos até serem reativados por um proprietário ou administrador.\n\n"+
		"Domínios afetados:\n- %s\n", keyID, ReasonEmergencyKeyRotation, strings.Join(domains, "\n- "))
	_, err := mail.ToManagers(ctx, tx, companyID, MailEmergencyKeyRotation,
		"Webhooks desativados por rotação de emergência da chave de API", body, now)
	return err
}

// host is the domain of a stored URL (the URL itself if it cannot be
// parsed, which validation makes impossible).
func host(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return raw
	}
	return u.Hostname()
}

// KeyRotated applies a key rotation (dashboard) to the endpoints subscribed
// with the old key, in the rotation's write unit: "stop now" disables them
// (emergency_key_rotation, one e-mail listing their domains, one
// webhook_endpoint.disabled each); a grace period moves their subscription
// to the new key.
func KeyRotated(ctx context.Context, w *streams.Write, rot *tenant.Rotation) error {
	if rot.StopNow {
		return emergencyDisable(ctx, w, rot.Old.ID)
	}
	_, err := w.Tx.NewUpdate().Model((*Row)(nil)).Set("subscriber_key_id = ?", rot.New.ID).
		Set("updated_at = ?", w.At).Where("subscriber_key_id = ?", rot.Old.ID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("webhooks: move subscriptions to %s: %w", rot.New.ID, err)
	}
	return nil
}

// KeyRevoked applies a revocation: a key revoked after public exposure
// disables its endpoints like "stop now"; a plain revocation leaves them
// (the dispatcher then closes their deliveries as subscriber_access_lost).
func KeyRevoked(ctx context.Context, w *streams.Write, k *tenant.APIKey) error {
	if k.RevokedReason == nil || *k.RevokedReason != tenant.RevokedExposed {
		return nil
	}
	return emergencyDisable(ctx, w, k.ID)
}

func emergencyDisable(ctx context.Context, w *streams.Write, keyID string) error {
	var es []Row
	err := w.Tx.NewUpdate().Model((*Row)(nil)).
		Set("status = ?", StatusDisabled).Set("disabled_reason = ?", ReasonEmergencyKeyRotation).
		Set("updated_at = ?", w.At).
		Where("subscriber_key_id = ?", keyID).Where("status = ?", StatusEnabled).
		Returning("*").Scan(ctx, &es)
	if err != nil {
		return fmt.Errorf("webhooks: emergency disable for %s: %w", keyID, err)
	}
	if len(es) == 0 {
		return nil
	}
	slices.SortFunc(es, func(a, b Row) int { return strings.Compare(a.ID, b.ID) })
	urls := make([]string, len(es))
	disabled := make([]*Row, len(es))
	for i := range es {
		urls[i], disabled[i] = es[i].URL, &es[i]
	}
	if err := mailEmergency(ctx, w.Tx, w.CompanyID, keyID, urls, w.At); err != nil {
		return err
	}
	return recordEndpoint(ctx, w, EventEndpointDisabled, disabled...)
}
