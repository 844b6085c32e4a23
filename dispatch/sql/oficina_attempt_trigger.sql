-- What triggered an attempt (the delivery log's triggered_by), the one
-- place this rule is written: the first attempt of a resend or a ping is
-- manual — someone asked for it —, every other attempt automatic. p_before
-- is how many attempts the delivery had before this one. Pure, so the
-- recording functions that call it inline it.
CREATE OR REPLACE FUNCTION oficina_attempt_trigger(p_kind text, p_before integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_kind <> 'event' AND p_before = 0 THEN 'manual' ELSE 'automatic' END $$;
