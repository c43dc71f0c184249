-- Schema version 5 of the MCP Tasks PostgreSQL store: a create may require its owner's lease.
-- `{schema}` stands for the quoted schema name. Run once, inside the migration transaction,
-- under the store's advisory lock.
--
-- `create_tasks` gains a twelfth array, `p_leased`: for a create where it is true, the owner
-- must be a node whose lease is live at the task's creation time (`p_created`), or the create
-- is refused with code 4 and nothing of it is stored. Without this, a node whose lease ran
-- out while its database stalled stored the creates it had queued under its dead id once the
-- database moved again, and another node took them over at once: acknowledged tasks failed
-- as interrupted on a node that never stopped.
--
-- The rows that pass are handed, in their order, to the version 3 function, which keeps its
-- codes, lock order and counters; builds of version 4 keep calling that one.
CREATE FUNCTION {schema}.create_tasks(
  p_ids text[], p_scopes text[], p_revisions bigint[], p_statuses text[], p_created bigint[],
  p_expires bigint[], p_tasks json[], p_works json[], p_owners bytea[], p_max_tasks bigint[],
  p_max_active bigint[], p_leased boolean[]
) RETURNS smallint[] LANGUAGE plpgsql AS $fn$
#variable_conflict error
DECLARE
  v_n integer := coalesce(cardinality(p_ids), 0);
  v_keep integer[];
  v_inner smallint[];
  v_outcome smallint[];
  v_j integer;
BEGIN
  SELECT coalesce(array_agg(k.i ORDER BY k.i), '{}') INTO v_keep
  FROM generate_series(1, v_n) AS k(i)
  WHERE NOT coalesce(p_leased[k.i], false)
     OR EXISTS (SELECT 1 FROM {schema}.nodes n
                WHERE n.node_id = p_owners[k.i] AND n.lease_expires_at_ms > p_created[k.i]);
  IF cardinality(v_keep) = v_n THEN
    RETURN {schema}.create_tasks(p_ids, p_scopes, p_revisions, p_statuses, p_created, p_expires,
                                 p_tasks, p_works, p_owners, p_max_tasks, p_max_active);
  END IF;
  v_outcome := array_fill(4::smallint, ARRAY[v_n]);
  IF cardinality(v_keep) = 0 THEN
    RETURN v_outcome;
  END IF;
  v_inner := {schema}.create_tasks(
    ARRAY(SELECT p_ids[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_scopes[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_revisions[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_statuses[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_created[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_expires[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_tasks[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_works[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_owners[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_max_tasks[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o),
    ARRAY(SELECT p_max_active[i] FROM unnest(v_keep) WITH ORDINALITY AS k(i, o) ORDER BY o));
  FOR v_j IN 1..cardinality(v_keep) LOOP
    v_outcome[v_keep[v_j]] := v_inner[v_j];
  END LOOP;
  RETURN v_outcome;
END
$fn$;
