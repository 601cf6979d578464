-- Bulk path of the action log (issue #11: deploy throughput). A deploy writes one resourceaction row and one
-- resourceaction_resource row per resource; the per-row foreign-key checks of those two inserts (the
-- environment of the action, the action of the link row) were a fifth of their PostgreSQL cost. Action rows are
-- written only by the scheduler for an environment it serves and link rows only in the same transaction as their
-- action, and every path deleting an environment or a project deletes both tables' rows explicitly
-- (PgStore.cpp deleteEnvironment, clearEnvironment, deleteProject), so the ON DELETE CASCADEs did no work of
-- their own. Versions never owned action rows (no foreign key to configurationmodel): deleting a version keeps
-- its actions, as before.
ALTER TABLE resourceaction DROP CONSTRAINT IF EXISTS resourceaction_environment_fkey;
ALTER TABLE resourceaction_resource DROP CONSTRAINT IF EXISTS resourceaction_resource_resource_action_id_fkey;
