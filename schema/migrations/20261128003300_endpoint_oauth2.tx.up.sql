-- OAuth2 client credentials per endpoint (issue 27 item 2): the token URL,
-- client id and scope in clear, the client secret sealed with the signing
-- secrets.
ALTER TABLE webhook_endpoints ADD COLUMN oauth2_token_url text;
ALTER TABLE webhook_endpoints ADD COLUMN oauth2_client_id text;
ALTER TABLE webhook_endpoints ADD COLUMN oauth2_scope text;
ALTER TABLE webhook_endpoints ADD COLUMN sealed_oauth2_secret bytea;
