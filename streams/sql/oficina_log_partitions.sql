-- Keeps the time-partitioned log (decision 0027): one partition a day for
-- event_outbox (by created_at), webhook_deliveries (by id, which sorts by
-- creation time) and webhook_attempts (by delivery_id, with their delivery).
--   * Makes the partitions of yesterday, today and p_ahead days ahead, and of
--     any day whose rows wait in a DEFAULT partition (rows carried over by the
--     upgrade, or written for a day not made yet), moving those rows in.
--   * With p_retention, drops every day partition that ended before
--     p_now - p_retention, and deletes what the DEFAULT partitions hold from
--     before then: retention costs one DROP a day and table, whatever the
--     rows (a day partition is dropped whole, so the log keeps between
--     p_retention and p_retention + 1 day). NULL (migrate) drops nothing.
-- Returns how many partitions it made and dropped and the rows it moved.
--
-- A delivery id's day partition spans the ids made from 00:00 to 24:00 UTC:
-- an id is its prefix, "_", 10 base32 digits of its milliseconds and 16 of
-- randomness (schema/ids), so the first id of a day is its milliseconds
-- followed by 16 zeros (oficina_id_floor).
--
-- Only a table's owner may add or drop its partitions: owned by the NOLOGIN
-- oficina_log_owner that owns the log tables, pg_temp searched last, the
-- workers' only (the sweeper) and the migrator's (as owner). One caller at a
-- time (an advisory lock); a partition made or dropped locks the parent
-- table briefly, so the wait for that lock is bounded and a round that
-- times out is simply repeated by the next.
CREATE OR REPLACE FUNCTION oficina_log_partitions(p_now timestamptz, p_ahead integer, p_retention interval,
                                                  OUT created integer, OUT dropped integer, OUT moved bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
  digits constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  today date;
  cutoff timestamptz;
  days date[];
  d date;
  t text;
  col text;
  lo text;
  hi text;
  opts text;
  part text;
  has boolean;
  n bigint;
BEGIN
  created := 0; dropped := 0; moved := 0;
  IF p_now IS NULL THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('oficina_log_partitions'));
  today := (p_now AT TIME ZONE 'UTC')::date;
  cutoff := p_now - p_retention; -- NULL without retention

  -- The days to have: around today first, then those of rows waiting in
  -- the defaults (newest first) within the last 62 days: a row dated
  -- further off (a clock gone wrong) stays in its default partition, and
  -- one call makes at most 16 days (each partition made holds its locks
  -- to the end of the call); the next call goes on.
  SELECT array_agg(x ORDER BY x >= today - 1 DESC, x DESC) INTO days FROM (
    SELECT DISTINCT x FROM (
      SELECT generate_series(today - 1, today + greatest(coalesce(p_ahead, 0), 0), interval '1 day')::date
      UNION ALL SELECT (created_at AT TIME ZONE 'UTC')::date FROM public.event_outbox_default
      UNION ALL SELECT (to_timestamp(ms / 1000.0) AT TIME ZONE 'UTC')::date FROM (
        SELECT (SELECT sum((strpos(digits, substr(k, i, 1)) - 1)::numeric * (32::numeric ^ (10 - i)))
                  FROM generate_series(1, 10) AS i) AS ms
          FROM (SELECT substr(id, length(id) - 25, 10) AS k FROM public.webhook_deliveries_default
                UNION ALL SELECT substr(delivery_id, length(delivery_id) - 25, 10) FROM public.webhook_attempts_default) s
         WHERE k ~ '^[0-9a-hjkmnp-tv-z]{10}$' AND k < '1') s -- ids of before the year 3084 only
    ) v(x)
    WHERE x BETWEEN today - 62 AND today + greatest(coalesce(p_ahead, 0), 0)
  ) w(x);

  FOREACH d IN ARRAY days LOOP
    EXIT WHEN created >= 48;
    CONTINUE WHEN cutoff IS NOT NULL AND (d + 1)::timestamp AT TIME ZONE 'UTC' <= cutoff;
    FOR t, col, lo, hi, opts IN
      SELECT v.t, v.col, quote_literal(v.lo), quote_literal(v.hi), v.opts FROM (VALUES
        ('event_outbox', 'created_at', (d::timestamp AT TIME ZONE 'UTC')::text, ((d + 1)::timestamp AT TIME ZONE 'UTC')::text, ''),
        ('webhook_deliveries', 'id', oficina_id_floor('dlv', d::timestamp AT TIME ZONE 'UTC'),
                                    oficina_id_floor('dlv', (d + 1)::timestamp AT TIME ZONE 'UTC'),
                                    ' WITH (fillfactor = 85)'), -- room for its outcome's HOT update
        ('webhook_attempts', 'delivery_id', oficina_id_floor('dlv', d::timestamp AT TIME ZONE 'UTC'),
                                            oficina_id_floor('dlv', (d + 1)::timestamp AT TIME ZONE 'UTC'), '')) AS v(t, col, lo, hi, opts)
    LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      CONTINUE WHEN to_regclass('public.' || quote_ident(part)) IS NOT NULL;
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM public.%I WHERE %I >= %s AND %I < %s)', t || '_default', col, lo, col, hi) INTO has;
      IF has THEN
        EXECUTE format('CREATE TABLE public.%I (LIKE public.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)%s', part, t, opts);
        EXECUTE format('WITH m AS (DELETE FROM public.%I WHERE %I >= %s AND %I < %s RETURNING *) INSERT INTO public.%I SELECT * FROM m',
                       t || '_default', col, lo, col, hi, part);
        GET DIAGNOSTICS n = ROW_COUNT;
        moved := moved + n;
        EXECUTE format('ALTER TABLE public.%I ATTACH PARTITION public.%I FOR VALUES FROM (%s) TO (%s)', t, part, lo, hi);
      ELSE
        EXECUTE format('CREATE TABLE public.%I PARTITION OF public.%I FOR VALUES FROM (%s) TO (%s)%s', part, t, lo, hi, opts);
      END IF;
      created := created + 1;
    END LOOP;
  END LOOP;

  IF cutoff IS NULL THEN
    RETURN;
  END IF;
  FOR part IN
    SELECT c.relname FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
      JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relnamespace = 'public'::regnamespace
       AND p.relname IN ('event_outbox', 'webhook_deliveries', 'webhook_attempts')
       AND c.relname ~ '_p[0-9]{8}$'
       AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= cutoff
     ORDER BY 1
  LOOP
    EXECUTE format('DROP TABLE public.%I', part);
    dropped := dropped + 1;
  END LOOP;
  lo := quote_literal(oficina_id_floor('dlv', cutoff));
  DELETE FROM public.event_outbox_default WHERE created_at < cutoff;
  EXECUTE format('DELETE FROM public.webhook_deliveries_default WHERE id < %s', lo);
  EXECUTE format('DELETE FROM public.webhook_attempts_default WHERE delivery_id < %s', lo);
END $$;

ALTER FUNCTION oficina_log_partitions(timestamptz, integer, interval) OWNER TO oficina_log_owner;
REVOKE ALL ON FUNCTION oficina_log_partitions(timestamptz, integer, interval) FROM PUBLIC, oficina_app;
GRANT EXECUTE ON FUNCTION oficina_log_partitions(timestamptz, integer, interval) TO oficina_worker;
