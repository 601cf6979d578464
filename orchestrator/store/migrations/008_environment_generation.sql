-- Deleting or clearing an environment under load (issue #25). The tables without a foreign key to their
-- environment (resource, resource_persistent_state, resourceaction, resourceaction_resource, agent: migrations
-- 004-006, kept for the bulk paths) are protected by the environment row lock instead: every writer of those
-- rows holds the row FOR KEY SHARE until it commits, and deleting or clearing takes it FOR UPDATE before it
-- deletes anything (PgStore.cpp lockEnvironmentShared/Exclusive, SchedulerStore::write). A clear keeps the
-- row, so it also counts a generation: a scheduler remembers the generation it started in and writes nothing
-- once the environment was cleared after that (its deploy records describe versions that are gone).
ALTER TABLE environment ADD COLUMN generation bigint NOT NULL DEFAULT 0;
