-- The log lines of an action (resourceaction.messages) as json instead of jsonb (issue #11: deploy
-- throughput). Every deploy writes one action row with four to five lines; jsonb parses them into its binary
-- form (a tree, keys sorted), json only checks the text and stores it as written: a 100k-row COPY of the
-- deploy bench's rows took 1.37–2.14 s with jsonb and 1.07–1.70 s with json (5 interleaved runs each,
-- load ~4). No reader depends on the binary form: the API builds its objects with json_build_object and
-- parses them into trees (key order and whitespace are not observable), the log-level filter reads the
-- array with json_array_elements, and a finish appends its lines to a started row as text (DeployWriter.cpp).
ALTER TABLE resourceaction ALTER COLUMN messages DROP DEFAULT;
ALTER TABLE resourceaction ALTER COLUMN messages TYPE json USING messages::json;
ALTER TABLE resourceaction ALTER COLUMN messages SET DEFAULT '[]';
