package webhooks

import (
	"net/http"
	"slices"
	"strconv"

	"oficina/schema/signing"
)

// An attempt's request headers are stored without those that every attempt
// of its delivery sends alike (issue 25 item 2): the dispatcher keeps what
// differs between attempts (HeadersToKeep: the timestamp and the
// signature), and the log puts the others back when it is read (Attempts),
// from the delivery's event, so it shows each attempt's headers as sent.
// A header is dropped only when its value is the one rebuilt, so a sender
// that one day sends something else is logged as it was.

// RepeatedHeaders are the request headers that every attempt of a
// delivery of the event eventID, whose body is size bytes, sends alike.
// Content-Length is left out when size < 0 (the body is unknown: its
// event's day is past retention).
func RepeatedHeaders(eventID string, size int) http.Header {
	h := make(http.Header, 4)
	h.Set(signing.HeaderID, eventID)
	h.Set(signing.HeaderContentType, signing.ContentType)
	h.Set(signing.HeaderUserAgent, signing.UserAgent)
	if size >= 0 {
		h.Set("Content-Length", strconv.Itoa(size))
	}
	return h
}

// HeadersToKeep returns sent (an attempt's request headers, as the
// dispatcher keeps them) without the headers RepeatedHeaders rebuilds with
// the same values: what an attempt stores.
func HeadersToKeep(sent map[string][]string, eventID string, size int) map[string][]string {
	if sent == nil {
		return nil
	}
	repeated := RepeatedHeaders(eventID, size)
	kept := make(map[string][]string, len(sent))
	for k, vs := range sent {
		if !slices.Equal(repeated[k], vs) {
			kept[k] = vs
		}
	}
	return kept
}

// withRepeatedHeaders returns stored (an attempt's stored request
// headers) with the repeated headers it lacks put back. An attempt stored
// before they were left out has them all already; one without headers
// (no request was made, or recorded before headers were kept) stays
// without.
func withRepeatedHeaders(stored map[string][]string, eventID string, size int) map[string][]string {
	if stored == nil {
		return nil
	}
	for k, vs := range RepeatedHeaders(eventID, size) {
		if _, ok := stored[k]; !ok {
			stored[k] = vs
		}
	}
	return stored
}
