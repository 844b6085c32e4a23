-- Portal sessions (issue 18, docs/portal.md): a company's webhook portal is
-- opened through a one-time link that becomes a short-lived session. Only
-- SHA-256 hashes of the link and session tokens are stored, like API keys.
-- The capabilities are enforced on the server (schema/portal); whoever
-- minted the session is kept, and the session acts as them.
CREATE TABLE portal_sessions (
  id                     text PRIMARY KEY,
  company_id             text NOT NULL REFERENCES companies(id),
  -- The one-time link: usable once, before expires_at.
  link_hash              bytea NOT NULL UNIQUE,
  link_used_at           timestamptz,
  -- Set when the link is used: the session cookie's token.
  session_hash           bytea UNIQUE,
  capabilities           text[] NOT NULL CHECK (cardinality(capabilities) > 0 AND
                           capabilities <@ ARRAY['read_only','manage_endpoints','view_secret','recover']),
  -- Who minted it: a dashboard member, or an API key (and its member).
  created_by_member_id   text NOT NULL,
  created_by_key_id      text,
  expires_at             timestamptz NOT NULL,
  revoked_at             timestamptz,
  last_seen_at           timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (company_id, created_by_member_id) REFERENCES members (company_id, id),
  FOREIGN KEY (company_id, created_by_key_id) REFERENCES api_keys (company_id, id)
);
CREATE INDEX portal_sessions_company ON portal_sessions (company_id, id);

ALTER TABLE portal_sessions ENABLE ROW LEVEL SECURITY;
ALTER TABLE portal_sessions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON portal_sessions USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
GRANT SELECT, INSERT, UPDATE, DELETE ON portal_sessions TO oficina_app;

-- The portal must find a session before its company is known: like
-- oficina_key_company, this door answers only which company a link or
-- session hash belongs to; the row is then read under that company's
-- policy (tenant.Tx).
GRANT SELECT ON portal_sessions TO oficina_definer;
CREATE POLICY definer_reads ON portal_sessions FOR SELECT TO oficina_definer USING (true);

CREATE FUNCTION oficina_portal_company(p_hash bytea) RETURNS text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT company_id FROM public.portal_sessions WHERE link_hash = p_hash OR session_hash = p_hash LIMIT 1 $$;

ALTER FUNCTION oficina_portal_company(bytea) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_portal_company(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_portal_company(bytea) TO oficina_app;
