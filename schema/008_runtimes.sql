-- 008: runtimes (issue 12 point 1). Each runner host probes, at start and every few
-- minutes, which runtimes of runner_runtimes_file its sandbox provides and replaces
-- its rows here (one transaction); GET /v1/runtimes lists the distinct (name,
-- version) of hosts seen in the last 5 minutes. version is NULL for a runtime without
-- a version argv (sh): only its program was found.
CREATE TABLE IF NOT EXISTS runner_runtimes (
  host        VARCHAR(128) CHARACTER SET ascii NOT NULL,
  name        VARCHAR(32)  CHARACTER SET ascii NOT NULL,
  version     VARCHAR(200) CHARACTER SET ascii NULL,
  aliases     VARCHAR(300) CHARACTER SET ascii NOT NULL,
  file        VARCHAR(128) NOT NULL,
  has_compile TINYINT      NOT NULL,
  seen_at     DATETIME(3)  NOT NULL,
  PRIMARY KEY (host, name),
  KEY runner_runtimes_seen (seen_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A job that named a compiled runtime: the compile step's argv (run first, in the
-- same workspace and sandbox profile, with the job's limits) and what it did
-- ({exit_code, status, stdout, stderr}, outputs bounded by the runner).
ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS compile_argv_json MEDIUMTEXT NULL,
  ADD COLUMN IF NOT EXISTS compile_result_json MEDIUMTEXT NULL;
