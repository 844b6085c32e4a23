// Package natsauth is the one source of the NATS users of Oficina and their
// least permissions: it renders docs/nats/oficina.conf (a ready nats-server
// configuration, NKey users in one account), the configuration `oficina dev`
// gives its embedded server, and the one the tests boot to prove each line.
//
// Every rule carries why the role needs it; the subjects come from what the
// code calls (streams/jsconfig, tenant, tenant/ratelimit, dispatch/lease,
// nats.go's JetStream API), and a test fails when the rendered file and
// the document drift apart.
package natsauth

import (
	"oficina/dispatch/lease"
	"oficina/streams/jsconfig"
	"oficina/tenant"
)

// Rule is one subject a role may publish or subscribe to, and why.
type Rule struct {
	Subject string
	Why     string
}

// Role is one NATS user: the process (or kind of client) it is for and the
// subjects it may publish and subscribe to; everything else is denied.
type Role struct {
	Name  string // also the NKey variable suffix
	About string
	Inbox string // the reply prefix it may read (natsconn.InboxPrefix)
	Pub   []Rule
	Sub   []Rule
}

// Find returns the role named name.
func Find(name string) (Role, bool) {
	for _, r := range Roles() {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}

// Role names.
const (
	API      = "api"
	Dispatch = "dispatch"
	Relay    = "relay"
	Consumer = "consumer"
	Admin    = "admin"
)

// Inbox is the reply prefix of role (natsconn.InboxPrefix's default): each
// user subscribes to its own only.
func Inbox(role string) string { return "_INBOX." + role }

const (
	jsAPI     = "$JS.API."
	kvRate    = "KV_" + jsconfig.RateLimitBucket
	kvLease   = "KV_" + lease.Bucket
	events    = jsconfig.EventsStream
	delivered = jsconfig.DeliveriesStream
)

// streamOwner is what a process needs to bring up a stream or bucket it
// owns: read it, create it on first start, apply a changed configuration.
func streamOwner(stream, why string) []Rule {
	return []Rule{
		{jsAPI + "STREAM.INFO." + stream, "read " + stream + " (" + why + ")"},
		{jsAPI + "STREAM.CREATE." + stream, "create " + stream + " on first start"},
		{jsAPI + "STREAM.UPDATE." + stream, "apply a changed configuration (replicas, limits, deny delete/purge)"},
	}
}

// replyTo is what a consumer's client publishes to for stream's messages:
// acks ($JS.ACK) or flow-control answers ($JS.FC), in the v1 subject the
// server uses by default and in the v2 one (domain and account hash
// first) of its js_ack_fmt_v2 feature flag.
func replyTo(kind, stream, why string) []Rule {
	return []Rule{
		{"$JS." + kind + "." + stream + ".>", why},
		{"$JS." + kind + ".*.*." + stream + ".>", "the same in the v2 format"},
	}
}

// Roles are the users of docs/nats/oficina.conf, in order.
func Roles() []Role {
	return []Role{apiRole(), dispatchRole(), relayRole(), consumerRole(""), consumerRole("co_EXAMPLE"), adminRole()}
}

func apiRole() Role {
	pub := []Rule{
		{jsconfig.AllEvents, "publish each write's events after commit (and the relay inside serve)"},
		{jsconfig.AllDeliveries, "publish each write's webhook deliveries (the stream puts them on partitions)"},
		{tenant.ChangedSubject, "tell the other processes a company's keys or plan changed (cache invalidation)"},
	}
	pub = append(pub, streamOwner(events, "serve owns the streams")...)
	pub = append(pub, streamOwner(delivered, "serve owns the streams")...)
	pub = append(pub, Rule{jsAPI + "INFO", "account info: nats.go reads the server's API level before creating a bucket"})
	pub = append(pub, streamOwner(kvRate, "the rate-limit bucket; recreated after a NATS restart")...)
	pub = append(pub,
		Rule{jsAPI + "DIRECT.GET." + kvRate + ".>", "read a company's rate-limit window"},
		Rule{"$KV." + jsconfig.RateLimitBucket + ".>", "write it (compare-and-swap create/update)"},
		Rule{jsAPI + "CONSUMER.CREATE." + events + ".*." + jsconfig.AllEvents, "GET /events/stream: an ordered consumer on the caller's company's events (the filter is the key's company)"},
		Rule{jsAPI + "CONSUMER.MSG.NEXT." + events + ".*", "fetch from that consumer"},
		Rule{jsAPI + "CONSUMER.DELETE." + events + ".*", "remove it when the stream ends or is reset"},
	)
	return Role{Name: API, About: "oficina serve (and dev): the public and admin API, its relay and sweepers", Inbox: Inbox(API), Pub: pub, Sub: []Rule{
		{tenant.ChangedSubject, "drop cached keys when another process says so"},
		{Inbox(API) + ".>", "its own replies: JetStream API answers and publish acks"},
	}}
}

func dispatchRole() Role {
	pub := []Rule{
		{jsAPI + "STREAM.INFO." + delivered, "wait for DELIVERIES (serve creates it)"},
		{jsAPI + "CONSUMER.CREATE." + delivered + ".*." + jsconfig.AllPartitions, "create or update a partition's durable consumer, filtered on its partition only"},
		{jsAPI + "CONSUMER.MSG.NEXT." + delivered + ".*", "fetch from the partitions it owns"},
		{jsAPI + "CONSUMER.INFO." + delivered + ".*", "read its partitions' pending counts (metrics)"},
		{jsconfig.AllSchedules, "schedule retries and park backlog (message schedules on DELIVERIES)"},
	}
	pub = append(pub, replyTo("ACK", delivered, "ack, nak, term and keep alive (in progress) what it fetched")...)
	pub = append(pub, Rule{jsAPI + "INFO", "account info: nats.go reads the server's API level before creating a bucket"})
	pub = append(pub, streamOwner(kvLease, "the dispatcher leases")...)
	pub = append(pub,
		Rule{"$KV." + lease.Bucket + ".>", "heartbeat its member key, take, renew and hand back partition leases"},
		Rule{jsAPI + "DIRECT.GET." + kvLease + ".>", "read a lease key (taking a partition handed back reads its delete marker)"},
		Rule{jsAPI + "CONSUMER.CREATE." + kvLease + ".>", "list the members (a key watch is an ordered consumer on the bucket)"},
		Rule{jsAPI + "CONSUMER.DELETE." + kvLease + ".*", "remove that watch when the list is read"},
	)
	pub = append(pub, replyTo("FC", kvLease, "answer the watch's flow control")...)
	return Role{Name: Dispatch, About: "oficina dispatch: consumes DELIVERIES partitions, sends webhooks, schedules retries", Inbox: Inbox(Dispatch), Pub: pub, Sub: []Rule{
		{Inbox(Dispatch) + ".>", "its own replies: fetched deliveries, API answers, acks, the lease watch"},
	}}
}

func relayRole() Role {
	return Role{Name: Relay, About: "oficina relay: republishes events and deliveries a crash or an outage left unpublished", Inbox: Inbox(Relay), Pub: []Rule{
		{jsconfig.AllEvents, "republish events"},
		{jsconfig.AllDeliveries, "republish deliveries"},
		{jsAPI + "STREAM.INFO." + events, "wait for EVENTS (serve creates it)"},
		{jsAPI + "STREAM.INFO." + delivered, "wait for DELIVERIES (serve creates it)"},
	}, Sub: []Rule{
		{Inbox(Relay) + ".>", "its own replies: publish acks"},
	}}
}

// consumerRole is an internal consumer, read-only: of every company, or of
// one when company is set. It may create and read its own consumers on
// EVENTS, never publish into it, delete or purge.
func consumerRole(company string) Role {
	name, about, scope, inbox := Consumer, "internal consumers of every company's events, read-only (oficina events tail)", ">", Inbox(Consumer)
	if company != "" {
		name = Consumer + "_" + company
		about = "an internal consumer of company " + company + " only, read-only (copy it per company)"
		scope = company + ".>"
		inbox = Inbox(Consumer) + "." + company
	}
	filter := "oficina.events." + scope
	pub := []Rule{
		{jsAPI + "CONSUMER.CREATE." + events + ".*." + filter, "create a consumer whose filter is within " + filter + " (the server refuses a body that differs from the subject)"},
		{jsAPI + "CONSUMER.MSG.NEXT." + events + ".*", "fetch from its consumers"},
		{jsAPI + "CONSUMER.INFO." + events + ".*", "read its consumers' state"},
	}
	pub = append(pub, replyTo("ACK", events, "ack what a durable consumer read")...)
	pub = append(pub, replyTo("FC", events, "answer flow control of a push consumer")...)
	return Role{Name: name, About: about, Inbox: inbox, Pub: pub, Sub: []Rule{
		{filter, "follow live events with a plain subscription"},
		{inbox + ".>", "its own replies: fetched events, API answers (events tail uses " + Inbox(Consumer) + ".<company>)"},
	}}
}

func adminRole() Role {
	return Role{Name: Admin, About: "operators with the nats CLI (stream and consumer management); keep its seed offline", Inbox: "_INBOX", Pub: []Rule{
		{">", "everything; still no delete or purge on EVENTS (the stream denies them)"},
	}, Sub: []Rule{
		{">", "everything"},
	}}
}
