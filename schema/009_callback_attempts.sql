-- 009: one row per webhook delivery attempt (issue 12 leftovers). The delivery pass
-- (sandbox-runner/callback.c) inserts attempt n of a job in the transaction that records
-- it on job_callbacks (guarded by the attempt count it read, so one attempt is written
-- once), so a job holds at most callback_max_attempts rows. A destination refused before
-- any connection is not an attempt (job_callbacks.last_error says why). `error` is the
-- service's own text, bounded, never the receiver's body; `outcome` is its class:
-- delivered, http_status (a non-2xx answer), dns, connect, tls, timeout, other, internal
-- (the job could not be rendered or signed). Rows go with the job (common/jobdata.c
-- jd_delete_job: purge).
--
-- webhook_attempt_counts: attempts by outcome since the table was made, for GET
-- /metrics (a counter: purge does not lower it). The same transaction adds 1 to one of
-- 16 shard rows of the outcome (chosen at random, so concurrent passes seldom wait on
-- one row); a scrape sums at most 8 x 16 rows instead of counting the attempts table.
CREATE TABLE IF NOT EXISTS job_callback_attempts (
  job_id      CHAR(36)     CHARACTER SET ascii NOT NULL,
  attempt     INT          NOT NULL,
  started_at  DATETIME(3)  NOT NULL,
  http_status INT          NULL,
  error       VARCHAR(255) NULL,
  duration_ms INT          NOT NULL,
  outcome     VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  PRIMARY KEY (job_id, attempt)
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS webhook_attempt_counts (
  outcome VARCHAR(16) CHARACTER SET ascii NOT NULL,
  shard   TINYINT     NOT NULL,
  n       BIGINT      NOT NULL DEFAULT 0,
  PRIMARY KEY (outcome, shard)
) ENGINE=InnoDB;
