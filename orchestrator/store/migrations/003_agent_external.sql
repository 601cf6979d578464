-- External agents (docs/deploy.md "External agents"): an agent claimed by an `inmanta agent` process. A row makes
-- the agent external for good: the scheduler sends its work to the claiming session, and answers `unavailable`
-- while no session holds it (connected = false). Deleting the row gives the agent back to local executors.
CREATE TABLE external_agent (
  environment      uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  name             varchar NOT NULL,
  holder           varchar NOT NULL DEFAULT '',   -- "<host> pid <pid> via <peer address>" of the last claim
  connected        boolean NOT NULL DEFAULT false,
  claimed_at       timestamptz,
  disconnected_at  timestamptz,
  PRIMARY KEY (environment, name)
);
