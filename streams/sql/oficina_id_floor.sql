-- The smallest id of prefix made at p_at (schema/ids): the prefix, "_", 10
-- base32 digits of p_at's milliseconds and 16 zeros of randomness. Ids sort
-- by creation time, so the ids of [a, b) are those in [floor(a), floor(b)):
-- the bounds of the log's day partitions (oficina_log_partitions).
CREATE OR REPLACE FUNCTION oficina_id_floor(p_prefix text, p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = public, pg_temp AS $$
  SELECT p_prefix || '_' || string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz',
           ((b.ms / (32::bigint ^ (10 - i))::bigint) % 32)::int + 1, 1), '' ORDER BY i) || repeat('0', 16)
    FROM (SELECT floor(extract(epoch FROM p_at) * 1000)::bigint AS ms) b, generate_series(1, 10) AS i $$;

REVOKE ALL ON FUNCTION oficina_id_floor(text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_id_floor(text, timestamptz) TO oficina_app, oficina_log_owner, oficina_definer;
