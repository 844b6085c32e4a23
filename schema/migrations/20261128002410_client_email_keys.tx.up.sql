-- Client e-mails are matched by a new key (issue 24 item 5, docs/api.md
-- "E-mail addresses", schema/clients.ParseEmail): NFKC and lower case, so
-- fullwidth letters and the composed and decomposed spellings of a letter
-- are one address; and an address holding an invisible character is
-- refused. Before, the key was the address in lower case, so a look-alike
-- (ana<U+200B>@example.com, ａｎａ@example.com, an NFD é) was another client.
--
-- Re-keyed as if the rule had always applied: an address that is not plain
-- ASCII gets the key of what it looks like (its invisible characters —
-- format characters such as zero-width spaces, joiners, BOM, soft hyphen
-- and bidirectional controls; variation selectors; other default-ignorable
-- code points — removed, then NFKC, lower case, NFKC). When several records
-- of a company now share a key, the oldest keeps it, as the first capture
-- would have, and lead capture finds that one from now on; the others keep
-- their data and every row that points at them (sales, orders, tasks,
-- quotes), and only leave de-duplication by e-mail (their key is cleared;
-- phones still match). No record is merged or deleted, and no event is
-- recorded: the addresses themselves do not change.
--
-- A plain ASCII address keeps its key (NFKC changes nothing in ASCII), so
-- only the others are computed. lower() follows the database's LC_CTYPE,
-- Go's strings.ToLower the Unicode tables: the same for every letter of the
-- usual libc UTF-8 locales (C.UTF-8 and the like).
--
-- Tables FORCE row-level security, so a non-superuser owner would see no
-- row: the check is lifted for these statements and put back.
ALTER TABLE clients NO FORCE ROW LEVEL SECURITY;

CREATE TABLE client_email_rekey AS
WITH changed AS (
  SELECT company_id, id, created_at,
         normalize(lower(normalize(regexp_replace(email,
           '[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u17b4-\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
           '', 'g'), NFKC)), NFKC) AS k
    FROM clients
   WHERE email_normalized IS NOT NULL AND octet_length(email) <> char_length(email)
), held AS (
  -- Plain ASCII records already holding a key a changed one now takes.
  SELECT c.company_id, c.id, c.created_at, c.email_normalized AS k
    FROM clients c JOIN (SELECT DISTINCT company_id, k FROM changed) x
      ON c.company_id = x.company_id AND c.email_normalized = x.k
   WHERE octet_length(c.email) = char_length(c.email)
), claims AS (
  SELECT *, true AS changed FROM changed
  UNION ALL
  SELECT *, false FROM held
)
SELECT id, k, changed, row_number() OVER (PARTITION BY company_id, k ORDER BY created_at, id) = 1 AS keeps
  FROM claims;

-- First every changed key and every losing one is cleared, then the
-- winners take theirs: the unique index (company_id, email_normalized) is
-- checked row by row, so no key may be taken while its old holder has it.
UPDATE clients c SET email_normalized = NULL
  FROM client_email_rekey r WHERE c.id = r.id AND (r.changed OR NOT r.keeps);
UPDATE clients c SET email_normalized = r.k
  FROM client_email_rekey r WHERE c.id = r.id AND r.changed AND r.keeps;

DROP TABLE client_email_rekey;
ALTER TABLE clients FORCE ROW LEVEL SECURITY;
