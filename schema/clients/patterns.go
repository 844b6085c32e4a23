package clients

import "oficina/schema/field"

// Limits of a contact as sent (trimmed).
const (
	MaxEmailLen = 254 // bytes; ASCII in EmailPattern, so characters too
	MaxPhoneLen = 40
)

// atom is a run of the characters RFC 5322 allows in a dot-atom (atext),
// in ASCII.
const atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"

// EmailPattern is the e-mail addresses the OpenAPI document states
// ParseEmail takes (issue 26 item 6; tested against it): blank (which
// counts as absent), or one bare dot-atom address, white space around it
// trimmed. ParseEmail also takes letters beyond ASCII and a domain literal
// (ana@[192.0.2.1]), which the pattern leaves out, so that a client
// checking with it is never refused by the server (its 254 bytes would
// otherwise be fewer characters).
const EmailPattern = `^[` + field.Spaces + `]*(?:` + atom + `(?:\.` + atom + `)*@` + atom + `(?:\.` + atom + `)*[` +
	field.Spaces + `]*)?$`

// sep are the characters NormalizePhone skips between digits, but "+".
const sep = `[ ().-]*`

// PhonePattern is the phones the OpenAPI document states NormalizePhone
// takes (tested against it): blank (absent), or "+" and 8 to 15 digits, or
// a national number of 8 to 15 digits after at most one trunk zero, the
// first digit after it not a zero; digits separated by spaces, dots,
// dashes and parentheses, white space around trimmed. NormalizePhone also
// takes a few spellings the pattern leaves out (a "+" between digits, an
// international "00" prefix, several leading zeros).
const PhonePattern = `^[` + field.Spaces + `]*(?:(?:\+` + sep + `(?:[0-9]` + sep + `){8,15}|` + sep + `(?:0` + sep + `)?[1-9]` +
	sep + `(?:[0-9]` + sep + `){7,14})[` + field.Spaces + `]*)?$`
