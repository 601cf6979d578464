-- Migration 001: the initial orchestrator schema (orchestrator.md §14). Applied once, in one transaction, by the
-- server's migration runner, which records the number in schema_version. Never edit a released migration: add
-- NNN_name.sql instead. This schema is the contract between the server (writes desired state, settings, agents,
-- compiles, scheduler requests) and the scheduler process (writes rps intent/deploy columns, actions, dryrun and
-- fact results); neither reads the other's private state.

CREATE TABLE project (
  id   uuid PRIMARY KEY,
  name varchar NOT NULL UNIQUE
);

CREATE TABLE environment (
  id                     uuid PRIMARY KEY,
  name                   varchar NOT NULL,
  project                uuid NOT NULL REFERENCES project(id) ON DELETE CASCADE,
  repo_url               varchar NOT NULL DEFAULT '',
  repo_branch            varchar NOT NULL DEFAULT '',
  description            varchar NOT NULL DEFAULT '',
  icon                   varchar NOT NULL DEFAULT '',
  settings               jsonb NOT NULL DEFAULT '{}',     -- key -> typed value; missing = default
  protected_settings     text[] NOT NULL DEFAULT '{}',    -- keys set by project.yml (API read-only)
  last_version           integer NOT NULL DEFAULT 0,      -- reserve_version counter
  halted                 boolean NOT NULL DEFAULT false,
  is_marked_for_deletion boolean NOT NULL DEFAULT false,
  UNIQUE (project, name)
);

-- One row per stored version.
CREATE TABLE configurationmodel (
  environment                      uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  version                          integer NOT NULL,
  date                             timestamptz NOT NULL DEFAULT now(),
  released                         boolean NOT NULL DEFAULT false,
  version_info                     jsonb,
  total                            integer NOT NULL DEFAULT 0,
  partial_base                     integer,
  is_suitable_for_partial_compiles boolean NOT NULL DEFAULT false,
  undeployable                     text[] NOT NULL DEFAULT '{}',  -- unversioned ids of undefined resources
  skipped_for_undeployable         text[] NOT NULL DEFAULT '{}',  -- their transitive dependents
  pip_config                       jsonb,
  project_constraints              text,
  PRIMARY KEY (environment, version)
);

-- The resources of each version (desired state). attributes = every exported key but id/version, with
-- "requires" as sorted unversioned ids (orchestrator.md §3.4). resource_set NULL = the shared set.
CREATE TABLE resource (
  environment       uuid NOT NULL,
  model             integer NOT NULL,
  resource_id       varchar NOT NULL,                    -- unversioned id
  resource_type     varchar NOT NULL,
  agent             varchar NOT NULL,
  resource_id_value varchar NOT NULL,
  attributes        jsonb NOT NULL,
  attribute_hash    varchar NOT NULL,                    -- orchestrator.md §3.6
  is_undefined      boolean NOT NULL DEFAULT false,
  resource_set      varchar,
  PRIMARY KEY (environment, model, resource_id),
  FOREIGN KEY (environment, model) REFERENCES configurationmodel(environment, version) ON DELETE CASCADE
);
CREATE INDEX resource_env_rid ON resource (environment, resource_id);

-- Deploy state per unversioned resource id (orchestrator.md §5). Rows are created at release; the scheduler owns
-- every column but the ones release fills in.
CREATE TABLE resource_persistent_state (
  environment                   uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  resource_id                   varchar NOT NULL,
  resource_type                 varchar NOT NULL,
  agent                         varchar NOT NULL,
  resource_id_value             varchar NOT NULL,
  current_intent_attribute_hash varchar,
  last_deployed_attribute_hash  varchar,
  last_deployed_version         integer,
  last_handler_run_at           timestamptz,
  last_success                  timestamptz,
  last_produced_events          timestamptz,
  is_undefined                  boolean NOT NULL DEFAULT false,
  orphaned_after                integer,
  is_deploying                  boolean NOT NULL DEFAULT false,
  last_handler_run              varchar NOT NULL DEFAULT 'NEW',          -- NEW|SUCCESSFUL|FAILED|SKIPPED
  last_handler_run_compliant    boolean,
  blocked                       varchar NOT NULL DEFAULT 'NOT_BLOCKED',  -- NOT_BLOCKED|BLOCKED|TEMPORARILY_BLOCKED
  last_non_deploying_status     varchar NOT NULL DEFAULT 'available',
  non_compliant_diff            jsonb,
  PRIMARY KEY (environment, resource_id)
);

-- The scheduler's progress: the newest released version it has folded into its intent.
CREATE TABLE scheduler (
  environment                  uuid PRIMARY KEY REFERENCES environment(id) ON DELETE CASCADE,
  last_processed_model_version integer
);

-- Work the server asks of an environment's scheduler process. The server inserts a row and runs
-- NOTIFY inmanta_scheduler, '<environment uuid>'; the scheduler deletes the rows it has taken (in id order) and
-- also reads the table at start, so nothing asked while it was down is lost.
-- kind: read_version | deploy {"agents": [..]|null, "repair": bool} | dryrun {"id": uuid, "version": n}
--       | agents_changed | get_fact {"resource_id": ".."} | settings_changed | halt | resume
CREATE TABLE scheduler_request (
  id          bigserial PRIMARY KEY,
  environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  kind        varchar NOT NULL,
  payload     jsonb NOT NULL DEFAULT '{}',
  created     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scheduler_request_env ON scheduler_request (environment, id);

-- The action log (orchestrator.md §15). messages: [{"level", "msg", "args", "kwargs", "timestamp"}].
CREATE TABLE resourceaction (
  action_id            uuid PRIMARY KEY,
  environment          uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  version              integer NOT NULL,
  resource_version_ids text[] NOT NULL,
  action               varchar NOT NULL,   -- store|deploy|dryrun|getfact
  started              timestamptz NOT NULL,
  finished             timestamptz,
  messages             jsonb NOT NULL DEFAULT '[]',
  status               varchar,
  changes              jsonb NOT NULL DEFAULT '{}',
  change               varchar,            -- nochange|created|updated|purged
  send_event           boolean
);
CREATE INDEX resourceaction_env_started ON resourceaction (environment, started DESC);

CREATE TABLE resourceaction_resource (
  environment        uuid NOT NULL,
  resource_action_id uuid NOT NULL REFERENCES resourceaction(action_id) ON DELETE CASCADE,
  resource_id        varchar NOT NULL,     -- unversioned
  resource_version   integer NOT NULL,
  PRIMARY KEY (environment, resource_id, resource_action_id)
);

-- Agents are names. The scheduler is registered as "$__scheduler".
CREATE TABLE agent (
  environment       uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  name              varchar NOT NULL,
  last_failover     timestamptz,
  paused            boolean NOT NULL DEFAULT false,
  unpause_on_resume boolean,
  PRIMARY KEY (environment, name)
);

-- Files are global, keyed by the sha1 hex of their bytes.
CREATE TABLE file (
  content_hash varchar PRIMARY KEY,
  content      bytea NOT NULL
);

-- Handler code registered with a version (orchestrator.md §3.3 step 4, §7).
CREATE TABLE inmanta_module (
  environment  uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  name         varchar NOT NULL,
  version      varchar NOT NULL,
  requirements text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (environment, name, version)
);
CREATE TABLE module_files (
  environment            uuid NOT NULL,
  inmanta_module_name    varchar NOT NULL,
  inmanta_module_version varchar NOT NULL,
  file_content_hash      varchar NOT NULL REFERENCES file(content_hash),
  python_module_name     varchar NOT NULL,
  is_byte_code           boolean NOT NULL DEFAULT false,
  FOREIGN KEY (environment, inmanta_module_name, inmanta_module_version)
    REFERENCES inmanta_module(environment, name, version) ON DELETE CASCADE
);
CREATE TABLE agent_modules (
  environment            uuid NOT NULL,
  cm_version             integer NOT NULL,
  agent_name             varchar NOT NULL,
  inmanta_module_name    varchar NOT NULL,
  inmanta_module_version varchar NOT NULL,
  PRIMARY KEY (environment, cm_version, agent_name, inmanta_module_name),
  FOREIGN KEY (environment, cm_version) REFERENCES configurationmodel(environment, version) ON DELETE CASCADE
);

-- Parameters and facts. resource_id '' = not tied to a resource.
CREATE TABLE parameter (
  id          uuid PRIMARY KEY,
  environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  name        varchar NOT NULL,
  value       varchar NOT NULL DEFAULT '',
  source      varchar NOT NULL,   -- fact|plugin|user|report
  resource_id varchar NOT NULL DEFAULT '',
  updated     timestamptz NOT NULL DEFAULT now(),
  metadata    jsonb,
  expires     boolean NOT NULL DEFAULT true,
  UNIQUE (environment, name, resource_id)
);
CREATE TABLE unknownparameter (
  id          uuid PRIMARY KEY,
  environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  name        varchar NOT NULL,
  source      varchar NOT NULL,
  resource_id varchar NOT NULL DEFAULT '',
  version     integer NOT NULL,
  metadata    jsonb,
  resolved    boolean NOT NULL DEFAULT false,
  FOREIGN KEY (environment, version) REFERENCES configurationmodel(environment, version) ON DELETE CASCADE
);

-- Server-side compiles (orchestrator.md §11): the queue is the rows with completed IS NULL, FIFO by requested.
CREATE TABLE compile (
  id                              uuid PRIMARY KEY,
  environment                     uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  requested                       timestamptz NOT NULL DEFAULT now(),
  started                         timestamptz,
  completed                       timestamptz,
  requested_environment_variables jsonb NOT NULL DEFAULT '{}',
  used_environment_variables      jsonb,
  do_export                       boolean NOT NULL DEFAULT true,
  force_update                    boolean NOT NULL DEFAULT false,
  metadata                        jsonb NOT NULL DEFAULT '{}',
  success                         boolean,
  version                         integer,
  handled                         boolean NOT NULL DEFAULT false,
  compile_data                    jsonb,
  substitute_compile_id           uuid,
  partial                         boolean NOT NULL DEFAULT false,
  removed_resource_sets           text[] NOT NULL DEFAULT '{}',
  exporter_plugin                 varchar,
  soft_delete                     boolean NOT NULL DEFAULT false
);
CREATE INDEX compile_env_requested ON compile (environment, requested);

CREATE TABLE report (
  id         uuid PRIMARY KEY,
  compile    uuid NOT NULL REFERENCES compile(id) ON DELETE CASCADE,
  name       varchar NOT NULL,
  command    varchar NOT NULL DEFAULT '',
  started    timestamptz NOT NULL,
  completed  timestamptz,
  outstream  text NOT NULL DEFAULT '',
  errstream  text NOT NULL DEFAULT '',
  returncode integer
);

-- Dry runs (orchestrator.md §6.11). resources: rvid -> {"changes": {...}, "diff_status": "..."}.
CREATE TABLE dryrun (
  id          uuid PRIMARY KEY,
  environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  model       integer NOT NULL,
  date        timestamptz NOT NULL DEFAULT now(),
  total       integer NOT NULL DEFAULT 0,
  todo        integer NOT NULL DEFAULT 0,
  resources   jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE notification (
  id          uuid PRIMARY KEY,
  environment uuid NOT NULL REFERENCES environment(id) ON DELETE CASCADE,
  created     timestamptz NOT NULL DEFAULT now(),
  title       varchar NOT NULL,
  message     varchar NOT NULL,
  severity    varchar NOT NULL DEFAULT 'message',
  uri         varchar,
  read        boolean NOT NULL DEFAULT false,
  cleared     boolean NOT NULL DEFAULT false
);

-- Revocable tokens (those minted with a jti).
CREATE TABLE token (
  jti          varchar PRIMARY KEY,
  environment  uuid REFERENCES environment(id) ON DELETE CASCADE,
  client_types text[] NOT NULL,
  issued       timestamptz NOT NULL DEFAULT now(),
  expire       timestamptz,
  revoked      boolean NOT NULL DEFAULT false
);
