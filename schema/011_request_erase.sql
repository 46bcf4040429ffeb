-- 011: a session request's payload (stdin bytes, an uploaded file) is erased once the
-- request is answered, failed or its session ends, as a job's stdin and files are at
-- its end: its size and SHA-256 are kept (common/sreq.c). `state` also takes 'taken'
-- (pending -> taken -> done | failed): the supervisor claims a row before it acts, so
-- a request the API failed (504) is never carried out later.
ALTER TABLE session_requests
  ADD COLUMN IF NOT EXISTS data_bytes BIGINT NULL AFTER data,
  ADD COLUMN IF NOT EXISTS data_sha256 CHAR(64) CHARACTER SET ascii NULL AFTER data_bytes;
