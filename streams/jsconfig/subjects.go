package jsconfig

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"unicode"
)

// Stream names.
const (
	EventsStream     = "EVENTS"
	DeliveriesStream = "DELIVERIES"
)

// Subject prefixes. Only the producer-facing ones (events, deliveries,
// dlvsched) are stream subjects; oficina.dlv is where the DELIVERIES
// transform stores messages and what partition consumers filter on. Nobody
// publishes to oficina.dlv directly: no stream listens there, so a partition
// cannot be chosen by hand.
const (
	eventsPrefix     = "oficina.events"
	deliveriesPrefix = "oficina.deliveries"
	partitionPrefix  = "oficina.dlv"
	schedulePrefix   = "oficina.dlvsched"
)

// The whole of each subject space, for permissions (ops/natsauth) and
// stream subjects.
const (
	AllEvents     = eventsPrefix + ".>"
	AllDeliveries = deliveriesPrefix + ".>"
	AllPartitions = partitionPrefix + ".>"
	AllSchedules  = schedulePrefix + ".>"
)

// ErrInvalidToken is wrapped by every subject helper's error for a bad id.
var ErrInvalidToken = errors.New("invalid subject token")

// ValidToken reports whether s can be one subject token: non-empty, and no
// ".", "*", ">" or whitespace/control characters, which NATS would read as a
// separator or wildcard (or reject).
func ValidToken(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidToken)
	}
	for _, r := range s {
		if r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidToken, s, r)
		}
	}
	return nil
}

// ValidEventType reports whether t is a dotted event type such as
// "sale.paid": one or more valid tokens joined by ".".
func ValidEventType(t string) error {
	if t == "" {
		return fmt.Errorf("%w: empty event type", ErrInvalidToken)
	}
	for tok := range strings.SplitSeq(t, ".") {
		if err := ValidToken(tok); err != nil {
			return fmt.Errorf("event type %q: %w", t, err)
		}
	}
	return nil
}

func validTokens(ids ...string) error {
	for _, id := range ids {
		if err := ValidToken(id); err != nil {
			return err
		}
	}
	return nil
}

// EventSubject is where an event is published:
// oficina.events.<company_id>.<event type>.
func EventSubject(companyID, eventType string) (string, error) {
	if err := ValidToken(companyID); err != nil {
		return "", fmt.Errorf("jsconfig: company id: %w", err)
	}
	if err := ValidEventType(eventType); err != nil {
		return "", fmt.Errorf("jsconfig: %w", err)
	}
	return eventsPrefix + "." + companyID + "." + eventType, nil
}

// CompanyEventsFilter matches every event of one company
// (oficina.events.<company_id>.>).
func CompanyEventsFilter(companyID string) (string, error) {
	if err := ValidToken(companyID); err != nil {
		return "", fmt.Errorf("jsconfig: company id: %w", err)
	}
	return eventsPrefix + "." + companyID + ".>", nil
}

// EventTypeFilter matches one event type across companies
// (oficina.events.*.<event type>).
func EventTypeFilter(eventType string) (string, error) {
	if err := ValidEventType(eventType); err != nil {
		return "", fmt.Errorf("jsconfig: %w", err)
	}
	return eventsPrefix + ".*." + eventType, nil
}

// DeliverySubject is where a delivery is published (and where a retry
// schedule targets): oficina.deliveries.<company_id>.<endpoint_id>. The
// stream stores it on the company's partition subject.
func DeliverySubject(companyID, endpointID string) (string, error) {
	if err := validTokens(companyID, endpointID); err != nil {
		return "", fmt.Errorf("jsconfig: delivery subject: %w", err)
	}
	return deliveriesPrefix + "." + companyID + "." + endpointID, nil
}

// PartitionFilter is the filter subject of partition p's durable consumer.
func PartitionFilter(p int) string {
	return partitionPrefix + "." + strconv.Itoa(p) + ".>"
}

// PartitionOf computes the partition the DELIVERIES transform gives a
// company, the same way nats-server's {{partition(P,1)}} does: FNV-1a 32-bit
// of the company token, modulo P. Dispatchers use it to route work without
// asking the server; a test pins it to the server's placement.
func PartitionOf(companyID string, partitions int) int {
	if partitions < 1 {
		return 0 // the server maps to "0" for 0 buckets, too
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(companyID))
	return int(h.Sum32() % uint32(partitions))
}

// StoredDelivery is what a stored DELIVERIES subject tells a dispatcher.
type StoredDelivery struct {
	Partition  int
	CompanyID  string
	EndpointID string
}

// ParseDeliverySubject reads a subject as stored by DELIVERIES
// (oficina.dlv.<partition>.<company_id>.<endpoint_id>), as seen by a
// partition consumer, for both first attempts and fired retries.
func ParseDeliverySubject(subject string) (StoredDelivery, error) {
	rest, ok := strings.CutPrefix(subject, partitionPrefix+".")
	if !ok {
		return StoredDelivery{}, fmt.Errorf("jsconfig: %q is not a partition subject", subject)
	}
	toks := strings.Split(rest, ".")
	if len(toks) != 3 {
		return StoredDelivery{}, fmt.Errorf("jsconfig: %q: want %s.<p>.<company>.<endpoint>", subject, partitionPrefix)
	}
	p, err := strconv.Atoi(toks[0])
	if err != nil || p < 0 {
		return StoredDelivery{}, fmt.Errorf("jsconfig: %q: bad partition %q", subject, toks[0])
	}
	if err := validTokens(toks[1], toks[2]); err != nil {
		return StoredDelivery{}, fmt.Errorf("jsconfig: %q: %w", subject, err)
	}
	return StoredDelivery{Partition: p, CompanyID: toks[1], EndpointID: toks[2]}, nil
}

// ScheduleSubject holds the pending retry (or parked re-send) of one
// delivery: oficina.dlvsched.<company_id>.<endpoint_id>.<delivery_id>.
// One subject per delivery matters: the server keeps only the latest
// schedule per subject (it adds Nats-Rollup: sub), so re-scheduling the same
// delivery replaces its pending retry, while two deliveries of one endpoint
// never overwrite each other.
func ScheduleSubject(companyID, endpointID, deliveryID string) (string, error) {
	if err := validTokens(companyID, endpointID, deliveryID); err != nil {
		return "", fmt.Errorf("jsconfig: schedule subject: %w", err)
	}
	return schedulePrefix + "." + companyID + "." + endpointID + "." + deliveryID, nil
}

// EndpointSchedulesFilter matches every pending schedule of one endpoint.
// Purging DELIVERIES with it cancels them (endpoint disabled or deleted).
func EndpointSchedulesFilter(companyID, endpointID string) (string, error) {
	if err := validTokens(companyID, endpointID); err != nil {
		return "", fmt.Errorf("jsconfig: schedules filter: %w", err)
	}
	return schedulePrefix + "." + companyID + "." + endpointID + ".*", nil
}
