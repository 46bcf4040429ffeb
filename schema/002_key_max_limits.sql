-- 002: per-key maximum limits (DESIGN.md section 4: a key's quotas include "max
-- limits"). A JSON object {"memory_mb": 128, ...}; a job's limit may not exceed the
-- lower of the key's and the operator's maximum. NULL: the operator's maxima only.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS max_limits_json TEXT NULL AFTER max_queued;
