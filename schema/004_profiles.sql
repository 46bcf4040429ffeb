-- 004: named sandbox profiles (issue 13 point 9). A key lists the profiles its jobs may
-- use (a JSON array of names; NULL: only "default"); a job names one (default
-- "default"). jobs.profile_digest stays the digest of what the runner actually used.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS profiles_json TEXT NULL AFTER max_running;
ALTER TABLE jobs
  ADD COLUMN IF NOT EXISTS profile_name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin
    NOT NULL DEFAULT 'default' AFTER profile_digest;
