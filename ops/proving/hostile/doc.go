// Package hostile is the black-box hostile-input run of issue 9 against a
// running Oficina (`oficina dev`, `oficina serve`). It speaks only HTTP and
// raw TCP: it reads the route table from the target's /openapi.json,
// sets up two companies through the admin API and, for every route,
// sends malformed and truncated JSON, wrong types, huge and negative
// numbers (numerals of 900,000 digits too), invalid UTF-8, NUL bytes,
// duplicate and unknown keys, bodies of 1 MB + 1, broken media types,
// idempotency keys and credentials, ids of the other company, broken query
// strings and methods, unclean paths under an Idempotency-Key, another
// key's Idempotency-Key and body, look-alike e-mails, broken HTTP, 10,000
// headers and slow clients.
//
// The bar, checked on every case: no 5xx; every error in the envelope of
// spec part 7 with the catalogue's status and type for its code and the
// request id of its Request-Id header; the expected status and code; no
// id of the other company in any answer; nothing written by a refused
// request (the reads that would show the write are compared before and
// after, and refused lead captures are captured again, which must not
// deduplicate); every public write sent with a valid Idempotency-Key and
// retried with it, the retry answering as the first request and writing
// nothing again; an unclean path never answered with a redirect (its key
// then works on the clean path); another key's stored answer never
// replayed; a look-alike e-mail refused or matched to the record it looks
// like; and GET /me still answering afterwards (its rate before and after
// is reported, not judged).
//
// `oficina hostile` runs it against a running server and `make hostile`
// starts one; the package test runs it against an in-process stack.
package hostile
