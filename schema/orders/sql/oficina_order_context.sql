-- What creating a service order needs of its company (orders'
-- loadCreationContext): plan and settings, how many of p_techs are active
-- technicians, and the automatic checklists of p_type (and of no type).
--
-- PL/pgSQL so the session keeps the plan; SECURITY INVOKER, so row-level
-- security applies inside as outside.
CREATE OR REPLACE FUNCTION oficina_order_context(p_company text, p_techs text[], p_type text)
RETURNS TABLE (plan text, timezone text, type_required boolean, required_fields text[],
               technician_completion_order text, monthly_order_quota integer, order_quota_unlimited boolean,
               technicians bigint, checklists jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  SELECT c.plan, c.timezone,
         EXISTS (SELECT 1 FROM public.service_order_types t WHERE t.company_id = c.id AND t.active AND t.required_on_create),
         COALESCE(s.required_fields, '{}'),
         COALESCE(s.technician_completion_order, 'none'),
         s.monthly_order_quota, COALESCE(s.order_quota_unlimited, false),
         (SELECT count(*) FROM public.members m
           WHERE m.company_id = c.id AND m.id = ANY (p_techs) AND m.type = 'technician' AND m.status = 'active'),
         (SELECT COALESCE(jsonb_agg(jsonb_build_object('id', k.id, 'items', k.items) ORDER BY k.id), '[]')
            FROM public.service_order_checklists k
           WHERE k.company_id = c.id AND k.active AND (k.type_id IS NULL OR k.type_id = p_type))
    FROM public.companies c LEFT JOIN public.service_order_settings s ON s.company_id = c.id
   WHERE c.id = p_company;
END
$$;
