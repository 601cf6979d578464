-- Idempotent scheduler writes (issue #25): every write batch of a scheduler process carries a key (the
-- process's random epoch and a sequence number) that SchedulerStore::write inserts in the batch's own
-- transaction. When the answer to a COMMIT is lost, the scheduler sends the same batch again with the same
-- key: if the first one landed, the key is there, the retry writes nothing and counts as done (no duplicate
-- action rows, no wedged write loop); if it did not land, the retry writes it. A scheduler deletes the keys of
-- earlier processes of its environment when it starts and keeps only its recent ones.
CREATE TABLE scheduler_batch (
    environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
    epoch uuid NOT NULL,
    seq bigint NOT NULL,
    PRIMARY KEY (environment, epoch, seq)
);
