package tenant

// Plan is a company's commercial plan.
type Plan string

// Plans of part 8.
const (
	PlanFree  Plan = "free"
	PlanStart Plan = "start"
	PlanPleno Plan = "pleno"
	PlanSupra Plan = "supra"
)

// PlanLimits are the limits of part 8's table.
type PlanLimits struct {
	API               bool
	RequestsPerMinute int
	ActiveKeys        int
	WebhookEndpoints  int
	// MonthlyRecords is the default monthly quota of service orders and of
	// sales (each counted on its own); 0 means none. The spec leaves the
	// values out (docs/api.md); a company may get its own in the admin API.
	MonthlyRecords int
}

var planLimits = map[Plan]PlanLimits{
	PlanFree:  {API: false, RequestsPerMinute: 0, ActiveKeys: 0, WebhookEndpoints: 0, MonthlyRecords: 30},
	PlanStart: {API: true, RequestsPerMinute: 60, ActiveKeys: 3, WebhookEndpoints: 3, MonthlyRecords: 300},
	PlanPleno: {API: true, RequestsPerMinute: 180, ActiveKeys: 10, WebhookEndpoints: 10, MonthlyRecords: 2000},
	PlanSupra: {API: true, RequestsPerMinute: 600, ActiveKeys: 25, WebhookEndpoints: 25},
}

// Limits returns the plan's limits; an unknown plan has none of the API.
func (p Plan) Limits() PlanLimits { return planLimits[p] }

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool { _, ok := planLimits[p]; return ok }

// MonthlyRecordQuota is the plan's default monthly quota of orders or of
// sales, nil when the plan has none.
func (p Plan) MonthlyRecordQuota() *int {
	if q := p.Limits().MonthlyRecords; q > 0 {
		return &q
	}
	return nil
}

// MaxOwnQuota bounds the monthly quota a company sets itself (the columns
// are 32-bit integers).
const MaxOwnQuota = 100_000_000

// OwnQuotaInRange reports whether a company's own quota is within
// 0..MaxOwnQuota; nil (the plan's) is.
func OwnQuotaInRange(own *int) bool { return own == nil || *own >= 0 && *own <= MaxOwnQuota }

// EffectiveMonthlyQuota is a company's monthly quota of orders or of sales
// on plan p: none when it is set unlimited, its own when it set one, else
// the plan's (nil: none).
func (p Plan) EffectiveMonthlyQuota(own *int, unlimited bool) *int {
	switch {
	case unlimited:
		return nil
	case own != nil:
		return own
	}
	return p.MonthlyRecordQuota()
}
