-- 010: the host's own work on a session's behalf (issue 25). A session's supervisor
-- runs as root outside the session's cgroup; what it reads, hashes or writes for the
-- session's file requests (logical bytes: a sparse file costs its size) and the CPU
-- time it spends on them are totals kept here by the supervisor (renewed with its
-- heartbeat, and at the end). The CPU time also counts against the session's
-- cpu_seconds (sandbox-runner/session.c check_limits).
ALTER TABLE sessions
  ADD COLUMN IF NOT EXISTS host_read_bytes BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS host_cpu_ms     BIGINT NOT NULL DEFAULT 0;
