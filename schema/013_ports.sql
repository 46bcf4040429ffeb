-- 013: sandbox ports (docs/E2B.md "Ports"): https://<port>-<session id>.<domain>/ reaches
-- a TCP port a command listens on inside the session. By default only the owner's key
-- (X-API-KEY) or the session's traffic token (e2b-traffic-access-token, E2B's
-- trafficAccessToken, shown once at create) opens it; `ports_public` is the creator's
-- explicit choice (E2B: network.allowPublicTraffic = true) to let anyone in.
-- session_traffic_tokens: the traffic tokens, SHA-256 only; rows go with their session.
ALTER TABLE sessions
  ADD COLUMN IF NOT EXISTS ports_public TINYINT(1) NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS session_traffic_tokens (
  token_hash BINARY(32)  NOT NULL PRIMARY KEY,
  session_id CHAR(36)    CHARACTER SET ascii NOT NULL,
  created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  KEY idx_traffic_tokens_session (session_id)
) ENGINE=InnoDB;
