// Package destguard decides which webhook destinations Oficina may contact
// and provides the only HTTP client that delivers to them.
//
// Webhook URLs are chosen by tenants, so every delivery is a request that an
// outsider aims from inside our network. Without a guard a tenant could point
// a webhook at the cloud metadata service (169.254.169.254, fd00:ec2::254,
// 100.100.100.200), at a database on a private address, or at a name that
// resolves to a public address when registered and to 127.0.0.1 when the
// delivery runs (DNS rebinding). Spec rule 6.5 therefore checks the URL on
// registration and again on every attempt.
//
// The guard works in two places:
//
//   - [Guard.CheckURL] validates a URL at registration: https only, no
//     user information, a port from 1 to 65535, a host name that is not a
//     local or internal name, and every A and AAAA record public. Weird IPv4
//     spellings (2130706433, 0177.0.0.1, 0x7f.1, 127.1) are refused rather
//     than interpreted, because parsers disagree about what they mean.
//   - [Guard.Client] returns the delivery client. Its dialer resolves names
//     itself, refuses the connection if any resolved address is not public,
//     and dials only the checked addresses, with [code.dny.dev/ssrf] as the
//     socket Control function so the address actually connected to is checked
//     once more. Proxies from the environment are ignored, redirects are not
//     followed and certificates are verified.
//
// Loopback and private ranges can be allowed only through
// [Config.AllowPrivate], meant for tests and development; host name rules
// (localhost, .internal, ...) apply regardless.
//
// Refusals are reported as [*RefusedError], which matches [ErrRefused] with
// errors.Is; [Reason] turns any delivery error into a short word for logs.
package destguard
