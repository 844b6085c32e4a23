-- A publishing process's heartbeat (streams.Publisher, decision 0029): its
-- low watermark — every write it stamped before p_low is on NATS or in
-- publish_backlog — and the time of the beat, both on its own wall clock.
-- p_gone removes the row: the process stopped with nothing in flight.
-- Answers whether the row was there before, so a process learns that the
-- relay declared it lost. One row per process and no company's data: a
-- door for the request role, which publishes after commit.
CREATE OR REPLACE FUNCTION oficina_publisher_beat(p_id text, p_low timestamptz, p_beat timestamptz, p_gone boolean)
RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  IF p_gone THEN
    DELETE FROM publishers WHERE id = p_id;
    RETURN FOUND;
  END IF;
  UPDATE publishers SET low = p_low, beat = p_beat WHERE id = p_id;
  IF FOUND THEN
    RETURN true;
  END IF;
  INSERT INTO publishers (id, low, beat) VALUES (p_id, p_low, p_beat) ON CONFLICT (id) DO UPDATE SET low = p_low, beat = p_beat;
  RETURN false;
END $$;

ALTER FUNCTION oficina_publisher_beat(text, timestamptz, timestamptz, boolean) OWNER TO oficina_definer;
REVOKE ALL ON FUNCTION oficina_publisher_beat(text, timestamptz, timestamptz, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oficina_publisher_beat(text, timestamptz, timestamptz, boolean) TO oficina_app;
