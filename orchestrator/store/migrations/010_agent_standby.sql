-- Agent failover (docs/deploy.md "Failover"): several `inmanta agent` processes may claim one agent; the
-- scheduler keeps the first as primary (external_agent.holder while connected) and the others as standbys,
-- promoted in claim order when the primary's connection ends. `standbys` lists their holders ("<host> pid
-- <pid> via <peer>") in promotion order; a scheduler start clears it (standbys reconnect and claim again).
ALTER TABLE external_agent ADD COLUMN standbys jsonb NOT NULL DEFAULT '[]';
