-- Handler code per model version (docs/pybridge.md "Code registered with the version"): `PUT /api/v1/codebatched/<v>`
-- arrives before the version exists, so the link has no foreign key to configurationmodel; the scheduler reads
-- it to start executors with the version's code. module_files keeps the file's path inside the module
-- ("plugins/sub/x.py") so the code can be laid out again.
ALTER TABLE module_files ADD COLUMN file_path varchar;
CREATE TABLE version_code (
  environment            uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  cm_version             integer NOT NULL,
  inmanta_module_name    varchar NOT NULL,
  inmanta_module_version varchar NOT NULL,
  PRIMARY KEY (environment, cm_version, inmanta_module_name)
);
