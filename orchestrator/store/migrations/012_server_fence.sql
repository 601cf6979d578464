-- The server fence (issue #25, docs/server.md "Life cycle", the row "one server per database"): the server
-- lock is a session advisory lock that a PostgreSQL restart drops, so holding it cannot by itself stop an old
-- server from writing beside a new one. The owner row names the server that serves this database; a server
-- claims it (inm_server_claim) after taking the session lock and before it serves, and every transaction of
-- a server starts with inm_server_fence, which fails unless the row still names that server. Both take the
-- fence advisory lock 0x696e6d616e746133 ("inmanta3") for the rest of their transaction: the claim
-- exclusively, the fence shared, so a claim waits for every transaction of the old owner in flight and those
-- that start after it see the new owner. Invariant: no transaction of a server commits after another server
-- claimed the row.
CREATE TABLE server_owner (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    owner text NOT NULL,
    claimed timestamptz NOT NULL DEFAULT now()
);

-- true when `me` owns the database; the lock is taken before the row is read, and a VOLATILE function reads
-- with a snapshot taken after it, so a claim committed while this waited is seen.
CREATE FUNCTION inm_server_fence(me text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(7597129886652981555);
    RETURN EXISTS (SELECT 1 FROM server_owner WHERE id = 1 AND owner = me);
END
$$;

-- Claims the database for `me` and returns true; with `retake` (the server owned it before and lost its
-- session lock in a restart) it claims only if no other server claimed it meanwhile, else returns false.
CREATE FUNCTION inm_server_claim(me text, retake boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    previous text;
BEGIN
    PERFORM pg_advisory_xact_lock(7597129886652981555);
    SELECT owner INTO previous FROM server_owner WHERE id = 1;
    IF retake AND previous IS DISTINCT FROM me THEN
        RETURN false;
    END IF;
    INSERT INTO server_owner (id, owner, claimed) VALUES (1, me, now())
        ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, claimed = EXCLUDED.claimed;
    RETURN true;
END
$$;
