-- The `store` action of a version covers every resource of that version, so its resources are no longer
-- listed row by row in resourceaction_resource (100k rows per 100k-resource put_version): readers find them
-- through resource (environment, model = the action's version) or, once the version is deleted, through the
-- action's resource_version_ids. Drop the rows earlier servers wrote, so no resource sees its store action twice.
DELETE FROM resourceaction_resource rar USING resourceaction ra
 WHERE ra.action_id = rar.resource_action_id AND ra.action = 'store';
