-- 001: keys, jobs, inputs, results, artifacts, events.
-- Every table is utf8mb4_bin: identity, idempotency keys and paths compare byte for byte
-- (a case-insensitive collation would let tenant "Acme" read tenant "acme").
-- Identity is copied from the key onto every job row so that reads never need a join
-- and a revoked or deleted key cannot orphan or re-scope a job.

CREATE TABLE api_keys (
  id                 CHAR(36)     CHARACTER SET ascii NOT NULL PRIMARY KEY,
  token_hash         BINARY(32)   NOT NULL,
  identity_namespace VARCHAR(128) NOT NULL,
  tenant_id          VARCHAR(128) NOT NULL,
  subject_type       VARCHAR(64)  NOT NULL,
  subject_id         VARCHAR(128) NOT NULL,
  actor_type         VARCHAR(64)  NULL,
  actor_id           VARCHAR(128) NULL,
  tenant_admin       TINYINT(1)   NOT NULL DEFAULT 0,
  allow_network      TINYINT(1)   NOT NULL DEFAULT 0,
  max_queued         INT          NULL,
  created_at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  revoked_at         DATETIME(3)  NULL,
  UNIQUE KEY api_keys_token (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE jobs (
  seq                BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id                 CHAR(36)     CHARACTER SET ascii NOT NULL,
  key_id             CHAR(36)     CHARACTER SET ascii NOT NULL,
  identity_namespace VARCHAR(128) NOT NULL,
  tenant_id          VARCHAR(128) NOT NULL,
  subject_type       VARCHAR(64)  NOT NULL,
  subject_id         VARCHAR(128) NOT NULL,
  actor_type         VARCHAR(64)  NULL,
  actor_id           VARCHAR(128) NULL,
  state              VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  command            MEDIUMTEXT   NULL,
  argv_json          MEDIUMTEXT   NULL,
  env_json           MEDIUMTEXT   NOT NULL,
  stdin              LONGBLOB     NOT NULL,
  cwd                VARCHAR(1024) NOT NULL DEFAULT '',
  network            TINYINT(1)   NOT NULL DEFAULT 0,
  artifacts_dir      VARCHAR(1024) NULL,
  metadata_json      TEXT         NOT NULL,
  wall_seconds       INT          NOT NULL,
  cpu_seconds        INT          NOT NULL,
  memory_mb          INT          NOT NULL,
  pids               INT          NOT NULL,
  output_bytes       BIGINT       NOT NULL,
  disk_mb            INT          NOT NULL,
  idempotency_key    VARCHAR(255) NULL,
  request_sha256     BINARY(32)   NULL,
  session_id         CHAR(36)     CHARACTER SET ascii NULL,
  cancel_requested   TINYINT(1)   NOT NULL DEFAULT 0,
  created_at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  started_at         DATETIME(3)  NULL,
  finished_at        DATETIME(3)  NULL,
  runner_id          VARCHAR(128) NULL,
  lease_expires_at   DATETIME(3)  NULL,
  attempt            INT          NOT NULL DEFAULT 0,
  profile_digest     VARCHAR(80)  NULL,
  UNIQUE KEY jobs_id (id),
  KEY jobs_claim (state, seq),
  KEY jobs_lease (state, lease_expires_at),
  KEY jobs_subject (identity_namespace, tenant_id, subject_type, subject_id, seq),
  KEY jobs_tenant (identity_namespace, tenant_id, seq),
  KEY jobs_key_state (key_id, state),
  UNIQUE KEY jobs_idempotency (identity_namespace, tenant_id, subject_type, subject_id,
                               idempotency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE job_files (
  job_id     CHAR(36)      CHARACTER SET ascii NOT NULL,
  idx        INT           NOT NULL,
  path       VARBINARY(1024) NOT NULL,
  content    LONGBLOB      NOT NULL,
  executable TINYINT(1)    NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, idx)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE job_results (
  job_id            CHAR(36)    CHARACTER SET ascii NOT NULL PRIMARY KEY,
  exit_code         INT         NULL,
  term_signal       INT         NULL,
  stdout            LONGBLOB    NOT NULL,
  stderr            LONGBLOB    NOT NULL,
  stdout_truncated  TINYINT(1)  NOT NULL DEFAULT 0,
  stderr_truncated  TINYINT(1)  NOT NULL DEFAULT 0,
  diagnostics_json  MEDIUMTEXT  NOT NULL,
  wall_ms           BIGINT      NULL,
  cpu_ms            BIGINT      NULL,
  memory_peak_bytes BIGINT      NULL,
  failure_json      TEXT        NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE job_artifacts (
  job_id  CHAR(36)      CHARACTER SET ascii NOT NULL,
  path    VARBINARY(1024) NOT NULL,
  size    BIGINT        NOT NULL,
  sha256  CHAR(64)      CHARACTER SET ascii NOT NULL,
  content LONGBLOB      NOT NULL,
  PRIMARY KEY (job_id, path)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE job_events (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  job_id     CHAR(36)     CHARACTER SET ascii NOT NULL,
  at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  from_state VARCHAR(16)  CHARACTER SET ascii NULL,
  to_state   VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  actor      VARCHAR(160) NOT NULL,
  detail     VARCHAR(255) NULL,
  KEY job_events_job (job_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
