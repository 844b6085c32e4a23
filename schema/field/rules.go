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

// Spaces are the characters strings.TrimSpace removes (unicode.IsSpace:
// Unicode's White_Space), as the body of a character class. The regular
// expressions of both the document's readers (ECMA-262) and Go (RE2) read
// \t…\r and \xHH alike; the characters above U+00FF, for which the two
// have no common escape, stand as themselves.
const Spaces = `\t\n\v\f\r \x85\xa0` + "\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

// NonBlankPattern is a string with something left once
// strings.TrimSpace has run: the required texts (a name, a reason, an
// item's description) are trimmed and then refused when empty.
const NonBlankPattern = `^[^\x00]*[^\x00` + Spaces + `][^\x00]*$`

// Rule is a rule between members of a request body, beside each member's
// own: when member If is present (and, when In is set, holds one of In;
// when Like is set, matches that pattern), the members of Require must be
// present (and match RequireLike when set) and those of Forbid absent.
// Unless turns the condition around: the rule applies when If is absent or
// fails In or Like. If may name a member of a member
// ("payment_plan.mode"). The OpenAPI document states each as an if/then;
// generators that do not read if/then (oapi-codegen, openapi-typescript)
// type the body as before.
type Rule struct {
	If          string
	In          []string
	Like        string
	Unless      bool
	Require     []string
	RequireLike string
	Forbid      []string
}

// Exclusive says that a and b are not sent together (one or the other).
func Exclusive(a, b string) Rule { return Rule{If: a, Forbid: []string{b}} }

// EitherNonBlank says that a or b is sent and not blank: unless a is, b
// must be (a blank e-mail counts as absent when there is a phone).
func EitherNonBlank(a, b string) Rule {
	return Rule{If: a, Like: NonBlankPattern, Unless: true, Require: []string{b}, RequireLike: NonBlankPattern}
}

// Together says that a and b are sent both or neither.
func Together(a, b string) []Rule {
	return []Rule{{If: a, Require: []string{b}}, {If: b, Require: []string{a}}}
}
