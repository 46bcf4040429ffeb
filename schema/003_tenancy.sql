-- 003: tenant isolation and resource safety (issue 7).
--
-- 1. Identity compares byte for byte. utf8mb4_bin is a PAD SPACE collation ('eve' =
--    'eve ' is true); utf8mb4_nopad_bin is not. Every column that scopes or matches an
--    identity, and the idempotency key, moves to it. Existing values are kept as they
--    are (the column type and length do not change).
ALTER TABLE api_keys
  MODIFY identity_namespace VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY tenant_id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY subject_type       VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY subject_id         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY actor_type         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  MODIFY actor_id           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL;

ALTER TABLE jobs
  MODIFY identity_namespace VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY tenant_id          VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY subject_type       VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY subject_id         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL,
  MODIFY actor_type         VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  MODIFY actor_id           VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
  MODIFY idempotency_key    VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL;

-- 2. Per-key quotas: stored bytes and running jobs (NULL: the config default / none).
ALTER TABLE api_keys
  ADD COLUMN IF NOT EXISTS max_stored_mb BIGINT NULL AFTER max_limits_json,
  ADD COLUMN IF NOT EXISTS max_running   INT    NULL AFTER max_stored_mb;

-- 3. Output and artifact contents in chunks (at most STORE_CHUNK_BYTES each, 1 MiB), so
--    that no row, and no packet, grows with a job's output: a result of any configured
--    size fits under max_allowed_packet, a range read touches only the chunks it needs,
--    and the sessions work can append output while a command runs. `off` is the byte
--    offset of the chunk's first byte in its stream or file.
CREATE TABLE IF NOT EXISTS job_output (
  job_id CHAR(36)  CHARACTER SET ascii NOT NULL,
  stream TINYINT   NOT NULL,            -- 1 stdout, 2 stderr
  off    BIGINT    NOT NULL,
  data   LONGBLOB  NOT NULL,
  PRIMARY KEY (job_id, stream, off)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS job_artifact_chunks (
  job_id CHAR(36)        CHARACTER SET ascii NOT NULL,
  path   VARBINARY(1024) NOT NULL,
  off    BIGINT          NOT NULL,
  data   LONGBLOB        NOT NULL,
  PRIMARY KEY (job_id, path, off)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE job_results
  ADD COLUMN IF NOT EXISTS stdout_bytes BIGINT NOT NULL DEFAULT 0 AFTER stderr,
  ADD COLUMN IF NOT EXISTS stderr_bytes BIGINT NOT NULL DEFAULT 0 AFTER stdout_bytes;

INSERT INTO job_output (job_id, stream, off, data)
  SELECT job_id, 1, 0, stdout FROM job_results WHERE LENGTH(stdout) > 0;
INSERT INTO job_output (job_id, stream, off, data)
  SELECT job_id, 2, 0, stderr FROM job_results WHERE LENGTH(stderr) > 0;
UPDATE job_results SET stdout_bytes = LENGTH(stdout), stderr_bytes = LENGTH(stderr);
ALTER TABLE job_results DROP COLUMN stdout, DROP COLUMN stderr;

INSERT INTO job_artifact_chunks (job_id, path, off, data)
  SELECT job_id, path, 0, content FROM job_artifacts WHERE LENGTH(content) > 0;
ALTER TABLE job_artifacts DROP COLUMN content;

-- 4. Storage accounting. jobs.stored_bytes is what the job holds now (inputs while it
--    waits; output and artifacts once it ended, the inputs being erased then). The sum
--    per key lives in key_storage, spread over shards so that concurrent submits of one
--    key do not serialize on one row; the quota check sums a key's shards.
ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS stored_bytes   BIGINT     NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS env_meta_json  TEXT       NULL,
  ADD COLUMN IF NOT EXISTS stdin_bytes    BIGINT     NULL,
  ADD COLUMN IF NOT EXISTS stdin_sha256   CHAR(64)   CHARACTER SET ascii NULL,
  ADD COLUMN IF NOT EXISTS inputs_erased  TINYINT(1) NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS fair_tag       BIGINT     NOT NULL DEFAULT 0;

ALTER TABLE job_files
  ADD COLUMN IF NOT EXISTS size   BIGINT   NULL,
  ADD COLUMN IF NOT EXISTS sha256 CHAR(64) CHARACTER SET ascii NULL;

CREATE TABLE IF NOT EXISTS key_storage (
  key_id CHAR(36)         CHARACTER SET ascii NOT NULL,
  shard  TINYINT UNSIGNED NOT NULL,
  bytes  BIGINT           NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- 5. Secrets do not stay at rest: a finished job keeps env names, sizes and sha256,
--    stdin's size and sha256, and each file's size and sha256, not the values. Done
--    here for the jobs that ended before this migration.
UPDATE jobs j SET env_meta_json = COALESCE((
    SELECT JSON_ARRAYAGG(JSON_OBJECT('name', k.name,
             'size', LENGTH(JSON_UNQUOTE(JSON_EXTRACT(j.env_json, CONCAT('$.', JSON_QUOTE(k.name))))),
             'sha256', SHA2(JSON_UNQUOTE(JSON_EXTRACT(j.env_json, CONCAT('$.', JSON_QUOTE(k.name)))), 256)))
    FROM JSON_TABLE(JSON_KEYS(j.env_json), '$[*]' COLUMNS (name VARCHAR(255) PATH '$')) k), '[]')
  WHERE j.env_meta_json IS NULL;
UPDATE job_files f JOIN jobs j ON j.id = f.job_id
  SET f.size = LENGTH(f.content), f.sha256 = SHA2(f.content, 256)
  WHERE f.size IS NULL;
UPDATE jobs SET stdin_bytes = LENGTH(stdin), stdin_sha256 = SHA2(stdin, 256)
  WHERE stdin_bytes IS NULL;
UPDATE job_files f JOIN jobs j ON j.id = f.job_id SET f.content = ''
  WHERE j.state NOT IN ('queued', 'running');
UPDATE jobs SET env_json = '{}', stdin = '', inputs_erased = 1
  WHERE state NOT IN ('queued', 'running');

UPDATE jobs j SET stored_bytes =
    LENGTH(j.stdin) + LENGTH(j.env_json)
  + COALESCE((SELECT SUM(LENGTH(f.content)) FROM job_files f WHERE f.job_id = j.id), 0)
  + COALESCE((SELECT r.stdout_bytes + r.stderr_bytes FROM job_results r WHERE r.job_id = j.id), 0)
  + COALESCE((SELECT SUM(a.size) FROM job_artifacts a WHERE a.job_id = j.id), 0);
DELETE FROM key_storage;
INSERT INTO key_storage (key_id, shard, bytes)
  SELECT key_id, 0, SUM(stored_bytes) FROM jobs GROUP BY key_id;

-- 6. Fair claims: round robin across tenants, FIFO within one. A job's fair_tag is set
--    at submit to max(the smallest tag still queued, its tenant's largest queued tag + 1);
--    claims take the smallest (fair_tag, seq). Jobs queued before this migration keep
--    their FIFO order.
UPDATE jobs SET fair_tag = seq WHERE state = 'queued';
ALTER TABLE jobs
  ADD KEY jobs_fair (state, fair_tag, seq),
  ADD KEY jobs_fair_tenant (state, identity_namespace, tenant_id, fair_tag),
  ADD KEY jobs_finished (finished_at),
  DROP KEY jobs_claim;
