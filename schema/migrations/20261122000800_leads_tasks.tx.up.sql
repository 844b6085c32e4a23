-- Tasks (the follow-up work of a company; lead capture opens one per
-- captured contact). A task may point at a client record and at a member.
CREATE TABLE tasks (
  id             text PRIMARY KEY,
  company_id     text NOT NULL REFERENCES companies(id),
  title          text NOT NULL,
  description    text,
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','in_progress','completed','canceled')),
  priority       text NOT NULL DEFAULT 'medium' CHECK (priority IN ('low','medium','high','urgent')),
  due_date       timestamptz,
  -- The assignee is a member; its type (org_member, technician, seller,
  -- assistant) is kept with it as the API shows the pair. Deleting the
  -- member clears the link (spec 6.3 rule 7: no task event of its own); a
  -- type without an id is shown as no assignee.
  assignee_id    text REFERENCES members(id) ON DELETE SET NULL,
  assignee_type  text CHECK (assignee_type IN ('org_member','technician','seller','assistant')),
  -- Deleting the client unlinks its tasks (the link is cleared along with
  -- the parent, so only client.deleted is sent).
  client_id      text REFERENCES clients(id) ON DELETE SET NULL,
  started_at     timestamptz,
  completed_at   timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (assignee_id IS NULL OR assignee_type IS NOT NULL)
);
CREATE INDEX tasks_company ON tasks (company_id, id);
CREATE INDEX tasks_client ON tasks (client_id) WHERE client_id IS NOT NULL;
CREATE INDEX tasks_assignee ON tasks (assignee_id) WHERE assignee_id IS NOT NULL;

ALTER TABLE tasks ENABLE ROW LEVEL SECURITY;
ALTER TABLE tasks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON tasks USING (company_id = oficina_company()) WITH CHECK (company_id = oficina_company());
GRANT SELECT, INSERT, UPDATE, DELETE ON tasks TO oficina_app;
