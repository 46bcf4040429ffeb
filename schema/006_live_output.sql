-- 006: live output of plain jobs (issue 9). While a job runs, its supervisor stores
-- stdout/stderr as they arrive (job_output chunks, flushed every 50 ms or 64 KiB) and,
-- in the same transaction as each chunk, adds the chunk's length here. So a reader that
-- sees N bytes counted finds all N in chunks, and the conditional update that advances
-- the count (WHERE ..._live_bytes = the chunk's offset, state running, our runner_id)
-- is also how a supervisor learns, after a connection died around a COMMIT, whether
-- that chunk was stored. At the end the result transaction sets them to the totals
-- (job_results.stdout_bytes/stderr_bytes stay the authority for a finished job; jobs
-- that ended before this migration keep 0 here).
ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS stdout_live_bytes BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS stderr_live_bytes BIGINT NOT NULL DEFAULT 0;
