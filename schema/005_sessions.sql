-- 005: sessions (issue 9). A session is a sandbox that lives on the runner host that
-- claimed it (runner_host, runner_id = runtime_id) with its own uid, cgroup and
-- workspace, an agent as its first process, and commands started in it on request.
-- API hosts never talk to runner hosts: every command, kill, stdin write, file
-- operation and close is a session_requests row the owning supervisor claims and
-- answers. Command output is stored as it arrives in job_output, keyed by the
-- command's id (the chunk store jobs use).

ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS max_sessions INT NULL AFTER max_running;

CREATE TABLE IF NOT EXISTS sessions (
  seq                BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id                 CHAR(36)     CHARACTER SET ascii NOT NULL,
  key_id             CHAR(36)     CHARACTER SET ascii NOT NULL,
  identity_namespace VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  tenant_id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  subject_type       VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  subject_id         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  actor_type         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  actor_id           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  -- starting ready closed expired failed lost
  status             VARCHAR(16)  CHARACTER SET ascii NOT NULL DEFAULT 'starting',
  -- effective session-wide limits
  memory_mb          INT          NOT NULL,
  pids               INT          NOT NULL,
  cpu_seconds        INT          NOT NULL,
  disk_mb            INT          NOT NULL,
  idle_seconds       INT          NOT NULL,
  max_seconds        INT          NOT NULL,
  network            TINYINT(1)   NOT NULL DEFAULT 0,
  env_json           MEDIUMTEXT   NOT NULL,        -- erased when the session ends
  env_meta_json      TEXT         NULL,            -- names, sizes, sha256 (kept)
  metadata_json      TEXT         NOT NULL,
  profile_name       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'default',
  profile_digest     VARCHAR(80)  NULL,
  created_at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  ready_at           DATETIME(3)  NULL,
  expires_at         DATETIME(3)  NOT NULL,        -- created_at + max_seconds
  last_activity_at   DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  ended_at           DATETIME(3)  NULL,
  runner_id          VARCHAR(128) NULL,            -- runtime_id: host/session-N/random
  runner_host        VARCHAR(128) NULL,
  lease_expires_at   DATETIME(3)  NULL,
  close_requested    TINYINT(1)   NOT NULL DEFAULT 0,
  end_reason         VARCHAR(512) NULL,            -- service text: why it ended
  failure_json       TEXT         NULL,            -- {stage, instance_status, ...}
  cleanup_status     VARCHAR(16)  CHARACTER SET ascii NULL,
  next_pid           INT          NOT NULL DEFAULT 0,
  stored_bytes       BIGINT       NOT NULL DEFAULT 0,
  UNIQUE KEY sessions_id (id),
  KEY sessions_status (status, seq),
  KEY sessions_host (runner_host, status),
  KEY sessions_key (key_id, status),
  KEY sessions_subject (identity_namespace, tenant_id, subject_type, subject_id, seq),
  KEY sessions_ended (ended_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Files the session starts with (POST /v1/sessions `files`): written into the
-- workspace by the supervisor, erased once the session is ready.
CREATE TABLE IF NOT EXISTS session_files (
  session_id CHAR(36)        CHARACTER SET ascii NOT NULL,
  path       VARBINARY(1024) NOT NULL,
  content    LONGBLOB        NOT NULL,
  executable TINYINT(1)      NOT NULL DEFAULT 0,
  PRIMARY KEY (session_id, path)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS session_commands (
  seq             BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  id              CHAR(36)      CHARACTER SET ascii NOT NULL,
  session_id      CHAR(36)      CHARACTER SET ascii NOT NULL,
  pid             INT           NOT NULL,          -- names the command in its session
  -- queued running succeeded failed timed_out output_limit killed cancelled error lost
  status          VARCHAR(16)   CHARACTER SET ascii NOT NULL DEFAULT 'queued',
  command         MEDIUMTEXT    NULL,
  argv_json       MEDIUMTEXT    NULL,
  env_json        MEDIUMTEXT    NOT NULL,          -- erased when the command ends
  cwd             VARCHAR(1024) NOT NULL DEFAULT '',
  stdin           LONGBLOB      NOT NULL,          -- initial stdin; erased at the end
  stdin_open      TINYINT(1)    NOT NULL DEFAULT 0, -- more stdin may come (stdin endpoint)
  timeout_seconds INT           NOT NULL,          -- 0: until the session ends
  output_bytes    BIGINT        NOT NULL,
  tag             VARCHAR(255)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  exit_code       INT           NULL,
  `signal`        INT           NULL,
  stdout_bytes    BIGINT        NOT NULL DEFAULT 0, -- stored so far (job_output chunks)
  stderr_bytes    BIGINT        NOT NULL DEFAULT 0,
  stdout_truncated TINYINT(1)   NOT NULL DEFAULT 0,
  stderr_truncated TINYINT(1)   NOT NULL DEFAULT 0,
  diagnostics_json TEXT         NULL,
  created_at      DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  started_at      DATETIME(3)   NULL,
  finished_at     DATETIME(3)   NULL,
  UNIQUE KEY session_commands_id (id),
  UNIQUE KEY session_commands_pid (session_id, pid),
  KEY session_commands_status (session_id, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per thing the owning supervisor must do. The API inserts it (state
-- pending) and, for the kinds it answers synchronously, reads the answer back
-- (result_json, result_data; http_status when the supervisor refused it).
CREATE TABLE IF NOT EXISTS session_requests (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  session_id  CHAR(36)     CHARACTER SET ascii NOT NULL,
  -- command kill stdin file_list file_get file_put file_delete close
  kind        VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  command_id  CHAR(36)     CHARACTER SET ascii NULL,
  args_json   TEXT         NULL,
  data        LONGBLOB     NULL,
  state       VARCHAR(8)   CHARACTER SET ascii NOT NULL DEFAULT 'pending', -- pending done failed
  http_status INT          NULL,
  result_json MEDIUMTEXT   NULL,
  result_data LONGBLOB     NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  done_at     DATETIME(3)  NULL,
  KEY session_requests_pending (session_id, state, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Runner hosts announce themselves (capacity for sessions, job slots) every few
-- seconds: the API refuses a session no live host has room for (503) instead of
-- leaving it `starting`.
CREATE TABLE IF NOT EXISTS runner_hosts (
  host         VARCHAR(128) CHARACTER SET ascii NOT NULL PRIMARY KEY,
  slots        INT          NOT NULL,
  max_sessions INT          NOT NULL,
  seen_at      DATETIME(3)  NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
