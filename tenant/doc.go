// Package tenant answers who is calling and what they may do: companies and
// their plans, members and their roles, API keys, the permission layers of
// part 5, and the company-scoped transaction every request runs in.
package tenant
