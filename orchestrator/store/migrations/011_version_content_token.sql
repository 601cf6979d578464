-- Delta versions (docs/server.md "Delta versions", issue #30): every version gets a random content token when
-- it is stored. Our exporter remembers the token of the version it pushed; a delta is accepted only against
-- the environment's latest version carrying that same token, so a version deleted, replaced after a clear,
-- or pushed by another client is never mistaken for the one the exporter computed its delta against.
ALTER TABLE configurationmodel ADD COLUMN content_token uuid NOT NULL DEFAULT gen_random_uuid();
