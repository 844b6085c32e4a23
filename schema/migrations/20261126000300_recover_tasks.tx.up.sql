-- Recovery (issue 18, docs/api.md "Recovering failed deliveries"): POST
-- /webhook_endpoints/{id}/recover resends every delivery of a time window
-- that failed and never later succeeded. The request counts them and keeps
-- the list (webhook_recover_items) with a task; a worker (dispatch/recovery)
-- then resends them in batches as new deliveries of the same events, each
-- batch in one company transaction with the items it marks, so a crash
-- neither loses nor repeats a resend.
CREATE TABLE webhook_recover_tasks (
  id             text PRIMARY KEY,
  company_id     text NOT NULL REFERENCES companies(id),
  endpoint_id    text NOT NULL,
  since          timestamptz NOT NULL,
  until          timestamptz NOT NULL,
  status         text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'canceled')),
  counted        integer NOT NULL CHECK (counted >= 0),
  sent           integer NOT NULL DEFAULT 0,
  -- Items that succeeded by other means before their turn.
  skipped        integer NOT NULL DEFAULT 0,
  cancel_reason  text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  completed_at   timestamptz,
  UNIQUE (company_id, id),
  FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE
);
-- One active task per endpoint: a second is refused (409) even in a race.
CREATE UNIQUE INDEX webhook_recover_tasks_active ON webhook_recover_tasks (company_id, endpoint_id) WHERE status = 'running';
CREATE INDEX webhook_recover_tasks_endpoint ON webhook_recover_tasks (company_id, endpoint_id, id);

CREATE TABLE webhook_recover_items (
  company_id   text NOT NULL REFERENCES companies(id),
  task_id      text NOT NULL,
  -- The failed delivery whose event is resent (resend_of of the new one).
  delivery_id  text NOT NULL,
  resend_id    text,
  done_at      timestamptz,
  PRIMARY KEY (task_id, delivery_id),
  FOREIGN KEY (company_id, task_id) REFERENCES webhook_recover_tasks (company_id, id) ON DELETE CASCADE,
  FOREIGN KEY (company_id, delivery_id) REFERENCES webhook_deliveries (company_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_recover_items_todo ON webhook_recover_items (task_id, delivery_id) WHERE done_at IS NULL;

-- A recovery's resends are ordinary deliveries (kind resend) that remember
-- their task: the worker keeps only a window of them waiting for a first
-- attempt, so a recovery goes at the receiver's pace.
ALTER TABLE webhook_deliveries ADD COLUMN recover_task_id text;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_recover_task_id_fkey
  FOREIGN KEY (company_id, recover_task_id) REFERENCES webhook_recover_tasks (company_id, id) ON DELETE SET NULL (recover_task_id);
CREATE INDEX webhook_deliveries_recover_waiting ON webhook_deliveries (recover_task_id)
  WHERE recover_task_id IS NOT NULL AND status = 'pending' AND attempt_count = 0;
-- The window's failed deliveries of an endpoint, by creation time.
CREATE INDEX webhook_deliveries_endpoint_created ON webhook_deliveries (company_id, endpoint_id, created_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['webhook_recover_tasks', 'webhook_recover_items'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format('CREATE POLICY tenant ON %I USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company())', t);
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO oficina_app', t);
  END LOOP;
END $$;

-- The recovery worker's door: which companies have a running task. Like
-- the other doors it answers company ids only, to the worker role only;
-- the tasks are then advanced under each company's policy.
GRANT SELECT ON webhook_recover_tasks TO oficina_definer;
CREATE POLICY definer_reads ON webhook_recover_tasks FOR SELECT TO oficina_definer USING (true);

CREATE FUNCTION oficina_recover_companies(p_limit integer) RETURNS SETOF text
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT DISTINCT company_id FROM public.webhook_recover_tasks WHERE status = 'running' ORDER BY 1 LIMIT p_limit $$;

ALTER FUNCTION oficina_recover_companies(integer) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_recover_companies(integer) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_recover_companies(integer) TO oficina_worker;
