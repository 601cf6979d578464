-- Bulk paths of a put_version and a release (issue #10: a 100k-resource push in < 3 s).
-- 1. The `store` action of a version covers every resource of that version, so its resources are no longer
--    listed row by row in resourceaction_resource (100k rows per 100k-resource put_version): readers find them
--    through resource (environment, model = the action's version) or, once the version is deleted, through the
--    action's resource_version_ids. Drop the rows earlier servers wrote, so no resource sees its store action
--    twice.
DELETE FROM resourceaction_resource rar USING resourceaction ra
 WHERE ra.action_id = rar.resource_action_id AND ra.action = 'store';
-- 2. No per-row foreign-key checks on the two 100k-row inserts (about a third of their cost): a version's
--    resources are written only inside the put_version transaction that inserted its configurationmodel row,
--    and every path deleting versions or environments deletes their resource and resource_persistent_state
--    rows explicitly (PgVersions.cpp, PgStore.cpp), so the ON DELETE CASCADE was never the one doing it.
ALTER TABLE resource DROP CONSTRAINT IF EXISTS resource_environment_model_fkey;
ALTER TABLE resource_persistent_state DROP CONSTRAINT IF EXISTS resource_persistent_state_environment_fkey;
