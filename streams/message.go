package streams

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"oficina/streams/jsconfig"
)

// Headers of a DELIVERIES message. Its data is the webhook body exactly as
// it is signed and sent (the envelope); the subject already names the
// company and endpoint, the headers repeat them so a consumer never has to
// parse subjects. jsconfig.RetryMsg keeps them on retries (it drops only
// Nats-* headers).
const (
	HeaderDeliveryID   = "Oficina-Delivery-Id"
	HeaderEndpointID   = "Oficina-Endpoint-Id"
	HeaderCompanyID    = "Oficina-Company-Id"
	HeaderEventID      = "Oficina-Event-Id"
	HeaderEventType    = "Oficina-Event-Type"
	HeaderDeliveryKind = "Oficina-Delivery-Kind"
	// The delivery's place in its object's order, to an endpoint that
	// orders by object (decision 0039); absent otherwise.
	HeaderOrderKey = "Oficina-Order-Key"
	HeaderOrderSeq = "Oficina-Order-Seq"
)

// DeliveryMessage is what DELIVERIES carries for one delivery.
type DeliveryMessage struct {
	DeliveryID string
	EndpointID string
	CompanyID  string
	EventID    string
	EventType  string
	Kind       string // KindEvent, KindPing or KindResend
	Body       []byte // the envelope: the exact webhook body
	// OrderKey (its object's id) and OrderSeq place the delivery in its
	// object's order, to an endpoint with ordering "object"; "" and 0
	// otherwise.
	OrderKey string
	OrderSeq int64
}

// Msg builds the message published on
// oficina.deliveries.<company_id>.<endpoint_id> with Nats-Msg-Id = delivery
// id, so a republish (relay, retried publish) is dropped by JetStream.
func (d DeliveryMessage) Msg() (*nats.Msg, error) {
	subject, err := jsconfig.DeliverySubject(d.CompanyID, d.EndpointID)
	if err != nil {
		return nil, fmt.Errorf("streams: delivery %s: %w", d.DeliveryID, err)
	}
	m := nats.NewMsg(subject)
	m.Header.Set(jetstream.MsgIDHeader, d.DeliveryID)
	m.Header.Set(HeaderDeliveryID, d.DeliveryID)
	m.Header.Set(HeaderEndpointID, d.EndpointID)
	m.Header.Set(HeaderCompanyID, d.CompanyID)
	m.Header.Set(HeaderEventID, d.EventID)
	m.Header.Set(HeaderEventType, d.EventType)
	m.Header.Set(HeaderDeliveryKind, d.Kind)
	if d.OrderKey != "" {
		m.Header.Set(HeaderOrderKey, d.OrderKey)
		m.Header.Set(HeaderOrderSeq, strconv.FormatInt(d.OrderSeq, 10))
	}
	m.Data = d.Body
	return m, nil
}

// ErrNotDelivery is wrapped by ParseDeliveryMessage for a message missing
// one of the delivery headers.
var ErrNotDelivery = errors.New("streams: not a delivery message")

// ParseDeliveryMessage reads a DELIVERIES message (a first attempt or a
// fired retry) back.
func ParseDeliveryMessage(h nats.Header, data []byte) (DeliveryMessage, error) {
	d := DeliveryMessage{
		DeliveryID: h.Get(HeaderDeliveryID), EndpointID: h.Get(HeaderEndpointID),
		CompanyID: h.Get(HeaderCompanyID), EventID: h.Get(HeaderEventID),
		EventType: h.Get(HeaderEventType), Kind: h.Get(HeaderDeliveryKind), Body: data,
	}
	for name, v := range map[string]string{HeaderDeliveryID: d.DeliveryID, HeaderEndpointID: d.EndpointID,
		HeaderCompanyID: d.CompanyID, HeaderEventID: d.EventID, HeaderEventType: d.EventType} {
		if v == "" {
			return d, fmt.Errorf("%w: no %s", ErrNotDelivery, name)
		}
	}
	if key := h.Get(HeaderOrderKey); key != "" {
		seq, err := strconv.ParseInt(h.Get(HeaderOrderSeq), 10, 64)
		if err != nil {
			return d, fmt.Errorf("%w: %s: %w", ErrNotDelivery, HeaderOrderSeq, err)
		}
		d.OrderKey, d.OrderSeq = key, seq
	}
	return d, nil
}

// eventMsg builds the EVENTS message of an event: the envelope on
// oficina.events.<company_id>.<type>, Nats-Msg-Id = event id.
func eventMsg(companyID, eventID, eventType string, body []byte) (*nats.Msg, error) {
	subject, err := jsconfig.EventSubject(companyID, eventType)
	if err != nil {
		return nil, fmt.Errorf("streams: event %s: %w", eventID, err)
	}
	m := nats.NewMsg(subject)
	m.Header.Set(jetstream.MsgIDHeader, eventID)
	m.Data = body
	return m, nil
}

// messages lists what publishing rs means: the event (unless deliveries
// only) and each delivery.
func messages(rs []Recorded) ([]outMsg, error) {
	var out []outMsg
	for _, r := range rs {
		if !r.DeliveriesOnly {
			m, err := eventMsg(r.CompanyID, r.ID, r.Type, r.Body)
			if err != nil {
				return nil, err
			}
			out = append(out, outMsg{msg: m, entry: BacklogEntry{CompanyID: r.CompanyID, ID: r.ID, Kind: BacklogEvent, CreatedAt: r.at}})
		}
		kind := KindEvent
		switch {
		case r.Type == PingType:
			kind = KindPing
		case r.DeliveriesOnly:
			kind = KindResend
		}
		for _, d := range r.Deliveries {
			m, err := DeliveryMessage{DeliveryID: d.ID, EndpointID: d.EndpointID, CompanyID: r.CompanyID,
				EventID: r.ID, EventType: r.Type, Kind: kind, Body: r.Body, OrderKey: d.OrderKey, OrderSeq: d.OrderSeq}.Msg()
			if err != nil {
				return nil, err
			}
			out = append(out, outMsg{msg: m, entry: BacklogEntry{CompanyID: r.CompanyID, ID: d.ID, Kind: BacklogDelivery, CreatedAt: r.at}})
		}
	}
	return out, nil
}

// outMsg is one message to publish and the backlog entry that stands for
// it until JetStream has it.
type outMsg struct {
	msg   *nats.Msg
	entry BacklogEntry
}
