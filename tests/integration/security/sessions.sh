# tests/integration/security/sessions.sh: security.sh's case 9: a session's processes and workspace against another session's.
# Sourced by security.sh at this case's place in the run: its helpers, variables and
# checks are the suite's (the same counts, in the same order).
# Job commands are single-quoted on purpose: they expand inside the sandbox.
# shellcheck shell=bash disable=SC2016

# ------------------------------------------------------------------ 9. other sessions

CASE="other sessions"
ctx "$CASE"
mkkey SA "sec-$RANDOM$RANDOM" tenant-a user alice
mkkey SB "sec-$RANDOM$RANDOM" tenant-b user bob
A_TOK=$SA_TOK
B_TOK=$SB_TOK
as "$A_TOK" screate '{}'
S1=$SID
as "$A_TOK" sready "$S1" "$(tscale 30)"
S1_SLOT=$(sslot "$S1")
as "$B_TOK" screate '{}'
S2=$SID
as "$B_TOK" sready "$S2" "$(tscale 30)"
S2_SLOT=$(sslot "$S2")
as "$B_TOK" sexec "$S2" "echo secret-of-b > mine.txt; echo ok" "$(tscale 30)"
# (scaled: in the guest, beside other guests, 300 s went by before the close)
as "$B_TOK" srun "$S2" '{"command":"sleep '"$(tscale 300 3600)"'","timeout_seconds":0}'
B_SLEEP=$CID
sleep "$(tscale 0.3)" # B's sleep has started by now
B_HOST_PID=$(pgrep -u $((UID_BASE + ${S2_SLOT:-0})) -x sleep | head -n 1)
expect_true "B's sleep runs as B's uid on the host" test -n "$B_HOST_PID"
expect_true "the two sessions have different uids" test "${S1_SLOT:-x}" != "${S2_SLOT:-x}"
as "$A_TOK" sexec "$S1" "ls /proc | grep -cE '^[0-9]+\$'; kill -0 ${B_HOST_PID:-1} 2>&1 && echo signalled || echo cannot-signal; cat mine.txt $STATE_DIR/work/slot-${S2_SLOT:-x}/mine.txt /proc/${B_HOST_PID:-1}/root/workspace/mine.txt 2>/dev/null; echo end" "$(tscale 30)"
expect_true "A sees few processes (its own pid namespace): $(head -n 1 <<< "$OUT")" test "$(head -n 1 <<< "$OUT")" -lt 20
expect_true "A cannot signal B's process" grep -q cannot-signal <<< "$OUT"
expect_true "A cannot find B's file" fails grep -q "secret-of-b" <<< "$OUT"
expect_true "A's workspace mount is not B's" fails grep -q "slot-${S2_SLOT:-x}" <<< "$(as "$A_TOK" sexec "$S1" 'cat /proc/self/mountinfo' "$(tscale 30)"; echo "$OUT")"
# host facts (section 1): a session's sandbox has its own boot_id and no kernel
# command line, like a job's; each session its own boot_id
as "$A_TOK" sexec "$S1" "$FACTS" "$(tscale 30)"
S1_FACTS=$OUT
as "$B_TOK" sexec "$S2" "$FACTS" "$(tscale 30)"
s1_boot=$(sed -n 's/^BOOT_ID1 //p' <<< "$S1_FACTS")
s2_boot=$(sed -n 's/^BOOT_ID1 //p' <<< "$OUT")
expect_eq "host facts: a session's /proc/cmdline is a bare newline" "CMDLINE <> rc=0" \
	"$(grep '^CMDLINE ' <<< "$S1_FACTS")"
expect_match "host facts: a session's boot_id is a v4 UUID" \
	'^BOOT_ID1 [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' "$S1_FACTS"
expect_true "host facts: a session's boot_id is not the host's ($s1_boot)" \
	test -n "$s1_boot" -a "$s1_boot" != "$HOST_BOOT_ID"
expect_true "host facts: another session has another boot_id ($s2_boot)" \
	test -n "$s2_boot" -a "$s2_boot" != "$s1_boot" -a "$s2_boot" != "$HOST_BOOT_ID"
expect_eq "host facts: a session's boot_id is the same on a second read" "BOOT_ID2 $s1_boot" \
	"$(grep '^BOOT_ID2 ' <<< "$S1_FACTS")"

# a closed session leaves nothing: processes, mounts, workspace, cgroup, supervisor
ctx "$CASE: close"
as "$B_TOK" req POST "/v1/sessions/$S2/close" '{}'
expect_true "close answered ($STATUS)" test "$STATUS" = 200 -o "$STATUS" = 202
poll 15 _sstatus_is "$S2" closed
as "$B_TOK" req GET "/v1/sessions/$S2"
expect_json .status closed
expect_json .cleanup_status completed
expect_eq "B's sleeper was cancelled" cancelled "$(cstatus "$B_SLEEP")"
as "$B_TOK" req GET "/v1/sessions/$S2/commands/$B_SLEEP"
expect_json .exit_code 137
S2_UID=$((UID_BASE + ${S2_SLOT:-0}))
expect_true "no process of the closed session's uid $S2_UID" poll 5 _uid_idle "$S2_UID"
expect_eq "no mount of its workspace" "" "$(grep -F "$STATE_DIR/work/slot-${S2_SLOT:-x}" /proc/mounts)"
expect_true "no workspace directory" test ! -e "$STATE_DIR/work/slot-${S2_SLOT:-x}"
expect_true "no cgroup of its slot" test -z "$(find /sys/fs/cgroup -maxdepth 3 -path "*$CG_NAME/slot-${S2_SLOT:-x}" 2> /dev/null)"
expect_eq "no supervisor left" "" "$(sup_pid "$S2")"
as "$B_TOK" req POST "/v1/sessions/$S2/commands" '{"command":"true"}'
expect_error 409 session_not_running
as "$B_TOK" req POST "/v1/sessions/$S2/close" '{}'
expect_status 200
expect_json .status closed
expect_eq "the session's env values are erased" '{}' "$(sql "SELECT env_json FROM sessions WHERE id = '$S2'")"
as "$A_TOK" req POST "/v1/sessions/$S1/close" '{}'
poll 15 _sstatus_is "$S1" closed
expect_true "no process of the first session's uid left" poll 5 _uid_idle $((UID_BASE + ${S1_SLOT:-0}))
expect_true "no workspace of the first session left" test ! -e "$STATE_DIR/work/slot-${S1_SLOT:-x}"
ctl keys revoke "$SA_ID" > /dev/null
ctl keys revoke "$SB_ID" > /dev/null
