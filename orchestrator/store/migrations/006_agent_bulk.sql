-- A 100k-resource put_version registers ~20k agents; their per-row foreign-key checks on environment cost more
-- than the insert itself (issue #10). Like migration 004 for resource and resource_persistent_state: the
-- put_version holds its environment row FOR KEY SHARE (one row lock instead of one check per agent, and the
-- same protection against a concurrent environment delete), and deleting an environment deletes its agents
-- explicitly (PgStore.cpp).
ALTER TABLE agent DROP CONSTRAINT IF EXISTS agent_environment_fkey;
