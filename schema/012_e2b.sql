-- 012: E2B compatibility (docs/E2B.md). A session made through the E2B control plane
-- (`POST /sandboxes`, `/v2/sandboxes`) is an ordinary session with `e2b` set: its
-- workspace is its commands' /home/user (HOME, the default cwd) and its files are
-- named by E2B paths.
--
-- e2b_tokens: the sandbox's envdAccessTokens, as SHA-256 only (a token is shown once,
-- to the caller of create or connect, and never stored). Create issues one; every
-- connect issues another (the SDK needs one in the answer and the first is not kept),
-- bounded per sandbox. envd calls name the sandbox by E2b-Sandbox-Id and prove it with
-- the token, or by the token alone (the Python SDK after Sandbox.connect): hence the
-- key on the hash. Rows go with their session (sandboxctl purge).
ALTER TABLE sessions
  ADD COLUMN IF NOT EXISTS e2b TINYINT(1) NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS e2b_tokens (
  token_hash BINARY(32)  NOT NULL PRIMARY KEY,
  session_id CHAR(36)    CHARACTER SET ascii NOT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY idx_e2b_tokens_session (session_id)
) ENGINE=InnoDB;
