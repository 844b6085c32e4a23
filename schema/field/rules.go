package field

// The rules below are what the request validators check, written as the
// OpenAPI document states them (issue 26 item 6: request schemas as strict
// as the server), so that a client validating with the document is refused
// by the server only for what a schema cannot say (a record that does not
// exist, a total that does not add up). The validators keep their own
// code; tests beside each pattern hold the two together.

// TextPattern is every string a request may carry: the request decoder
// refuses a NUL character (\u0000) in any string, since PostgreSQL text
// cannot hold one. The OpenAPI document gives it to every request string
// that has no pattern of its own; the others exclude NUL themselves.
const TextPattern = `^[^\x00]*$`

// spaces are the characters strings.TrimSpace removes (unicode.IsSpace:
// Unicode's White_Space), as a character class body. The regular
// expressions of both the document's readers (ECMA-262) and Go (RE2) read
// \t…\r and \xHH alike; the characters above U+00FF, for which the two
// have no common escape, stand as themselves.
const spaces = `\t\n\v\f\r \x85\xa0` + "\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

// NonBlankPattern is a string with something left once
// strings.TrimSpace has run: the required texts (a name, a reason, an
// item's description) are trimmed and then refused when empty.
const NonBlankPattern = `^[^\x00]*[^\x00` + spaces + `][^\x00]*$`

// Rule is a rule between members of a request body, beside each member's
// own: when member If is present (and, when In is set, holds one of In),
// the members of Require must be present and those of Forbid absent. If
// may name a member of a member ("payment_plan.mode"). The OpenAPI
// document states each as an if/then; generators that do not read if/then
// (oapi-codegen, openapi-typescript) type the body as before.
type Rule struct {
	If      string
	In      []string
	Require []string
	Forbid  []string
}

// Exclusive says that a and b are not sent together (one or the other).
func Exclusive(a, b string) Rule { return Rule{If: a, Forbid: []string{b}} }

// Together says that a and b are sent both or neither.
func Together(a, b string) []Rule {
	return []Rule{{If: a, Require: []string{b}}, {If: b, Require: []string{a}}}
}
