-- 007: job webhooks (issue 12, point 4). A job may name a callback_url; the transaction
-- that makes it terminal (common/jobdata.c jd_settle) adds its job_callbacks row, and the
-- runner's delivery pass (sandbox-runner/callback.c) claims due rows by moving
-- next_attempt_at into the future (a conditional UPDATE checked by affected rows: two
-- runners never send one delivery at once), POSTs the signed job object and records the
-- outcome. last_error is the service's own text (an address class, a curl error name),
-- never the receiver's body. api_keys.webhook_secret signs the deliveries of the key's
-- jobs: it must be recoverable to sign, so it is stored as is; only the runner reads it
-- and `sandboxctl keys create` shows it once.
ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS callback_url VARCHAR(2048) CHARACTER SET ascii NULL;
ALTER TABLE api_keys
  ADD COLUMN IF NOT EXISTS webhook_secret CHAR(64) CHARACTER SET ascii NULL;
CREATE TABLE IF NOT EXISTS job_callbacks (
  job_id          CHAR(36)     CHARACTER SET ascii NOT NULL PRIMARY KEY,
  state           ENUM('pending', 'delivered', 'failed') NOT NULL DEFAULT 'pending',
  attempts        INT          NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  last_status     INT          NULL,
  last_error      VARCHAR(255) NULL,
  delivery_id     CHAR(36)     CHARACTER SET ascii NOT NULL,
  delivered_at    DATETIME(3)  NULL,
  created_at      DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY job_callbacks_due (state, next_attempt_at)
) ENGINE=InnoDB;
