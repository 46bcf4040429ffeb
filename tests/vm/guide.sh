#!/usr/bin/env bash
# tests/vm/guide.sh: follows the install guide of systemd/README.md in the test VM, with
# systemd as PID 1 (`bash tests/vm/run.sh systemd`; tests/vm/guest.sh runs it before
# tests/vm/sdset.sh, which then tests the service installed here). Never on the host: it
# installs into /usr/local, /etc and /var, enables units, starts MariaDB and nginx.
#
# The guide's commands are taken from its fenced blocks, in order: a block that opens
# with "```sh guide" runs, one that opens with "```sh guide-skip" is a visible skip whose
# reason is the block's first line. All the blocks run in one bash (set -e -o pipefail,
# from the top of the checkout, so a variable set in one block is there in the next):
# a block that fails is a failed check, and the blocks after it are not run. Then the
# installed service is checked: MariaDB, the API, the runner and nginx active under
# systemd, a job through the guide's nginx site over HTTPS with the key the guide made,
# no token in any log, the retention timer, `sandboxctl migrate` run again (nothing
# applied), the backup restored into a scratch database, and `sandbox-runner --check`
# on a broken setting (the item named, exit 1). TAP-like output (lib.sh).
#
# What stands in for what a real host has: the API's DNS name resolves to 127.0.0.1
# through /etc/hosts (the guide's curl then works as on a host whose name points at it);
# tests/vm/guest.sh gives every service and timer DefaultDependencies=no (the VM boots
# a minimal target without sysinit.target).
set -u -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
GUIDE=$REPO/systemd/README.md
TIMINGS=${VM_TIMINGS:-/vmout/timings}
W=/var/tmp/vmguide
# VM only: PID 1 is systemd and the kernel was booted by tests/vm/run.sh in this mode
if [[ $(cat /proc/1/comm) != systemd ]] || ! grep -qw 'sandbox.mode=systemd' /proc/cmdline; then
	echo "Bail out! tests/vm/guide.sh runs only in the test VM (bash tests/vm/run.sh systemd)"
	exit 2
fi
rm -rf "$W"
mkdir -p "$W/steps"
export SANDBOX_VAR=$W SANDBOX_RESPONSES=$W/responses.jsonl
# shellcheck disable=SC1091
. "$REPO/tests/integration/lib.sh"
T0=$SECONDS

# ------------------------------------------------------------------ the guide's blocks
# steps/NN.sh (a block to run) or steps/NN.skip (a block skipped, its first line the
# reason), NN in the guide's order; steps/NN.line: the block's line in the README.
awk -v dir="$W/steps" '
	/^```sh guide(-skip)?[ \t]*$/ { n++; kind = ($2 == "guide-skip") ? "skip" : "sh"
		f = sprintf("%s/%02d.%s", dir, n, kind); printf "%d\n", NR > sprintf("%s/%02d.line", dir, n)
		inb = 1; next }
	inb && /^```/ { inb = 0; close(f); next }
	inb { print > f }
' "$GUIDE"
NSTEPS=$(find "$W/steps" -name '*.line' | wc -l)
expect_true "the guide has blocks marked for the test (sh guide)" test "$(find "$W/steps" -name '*.sh' | wc -l)" -ge 8

# The API's DNS name, as the guide's step 6a sets it, resolves here (no DNS in the VM).
# shellcheck disable=SC2016 # the guide's text, not an expansion
API_HOST=$(sed -n 's/^API_HOST=\${API_HOST:-\([a-z0-9.-]*\)}.*/\1/p' "$GUIDE" | head -n 1)
[[ -n $API_HOST ]] || API_HOST=api.example.com
grep -q " $API_HOST\$" /etc/hosts 2> /dev/null || echo "127.0.0.1 $API_HOST" >> /etc/hosts
note "VM stand-in: $API_HOST -> 127.0.0.1 in /etc/hosts"
echo "$API_HOST" > /var/tmp/vmguide-api-host # for tests/vm/sdset.sh

# One driver: each block sourced in turn, a marker after each (the guide's own output
# goes to driver.log; nothing in it is secret: the token goes into a root-only file).
{
	echo 'set -e -o pipefail'
	echo "cd '$REPO'"
	echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
	for f in "$W"/steps/*.sh; do
		n=$(basename "$f" .sh)
		echo "echo \"@@step $n begin \$(date +%s)\""
		echo ". '$f'"
		echo "echo \"@@step $n end \$(date +%s)\""
	done
} > "$W/driver.sh"
ctx "guide"
bash "$W/driver.sh" < /dev/null > "$W/driver.log" 2>&1
DRC=$?
for ((i = 1; i <= NSTEPS; i++)); do
	n=$(printf '%02d' "$i")
	line=$(cat "$W/steps/$n.line")
	if [[ -f $W/steps/$n.skip ]]; then
		skip "guide block $n (README line $line)" \
			"$(awk '!/^#/ { exit } { sub(/^# */, ""); printf "%s ", $0 }' "$W/steps/$n.skip")"
		continue
	fi
	title=$(head -n 1 "$W/steps/$n.sh" | sed 's/^# *//')
	b=$(sed -n "s/^@@step $n begin //p" "$W/driver.log")
	e=$(sed -n "s/^@@step $n end //p" "$W/driver.log")
	if [[ -n $e ]]; then
		_ok "guide block $n (README line $line): $title ($((e - b)) s)"
		echo "guide_step_${n}_s $((e - b))" >> "$TIMINGS"
	elif [[ -n $b ]]; then
		_notok "guide block $n (README line $line): $title" "exit 0" "the block failed (driver exit $DRC)" 0
		awk -v n="$n" '$0 ~ "^@@step " n " begin" { p = 1; next } p' "$W/driver.log" | tail -n 40 | sed 's/^/#   /'
		for u in $(systemctl list-units --failed --plain --no-legend | awk '{ print $1 }'); do
			note "failed unit $u:"
			journalctl -q --no-pager -o cat -n 25 -u "$u" | sed 's/^/#   /'
		done
	else
		_notok "guide block $n (README line $line): $title" "run" "not reached (an earlier block failed)" 0
	fi
done
b=$(sed -n 's/^@@step [0-9]* begin //p' "$W/driver.log" | head -n 1)
e=$(sed -n 's/^@@step [0-9]* end //p' "$W/driver.log" | tail -n 1)
[[ -n $b && -n $e ]] && echo "guide_blocks_s $((e - b))" >> "$TIMINGS"
echo "guide_s $((SECONDS - T0))" >> "$TIMINGS"
note "the guide's output: $(grep -vc '^@@step' "$W/driver.log") lines ($W/driver.log)"

if ((DRC != 0)); then
	note "the guide failed (driver exit $DRC): the installed service is not checked"
	finish
	exit 1
fi

# ------------------------------------------------------------------ the installed service
ctx "installed"
for u in mariadb sandbox-api sandbox-runner nginx; do
	expect_eq "systemctl is-active $u" active "$(systemctl is-active "$u" 2>&1)"
	expect_eq "systemctl is-enabled $u" enabled "$(systemctl is-enabled "$u" 2>&1)"
done
expect_eq "the API runs as sandbox" sandbox \
	"$(ps -o user= -p "$(systemctl show -p MainPID --value sandbox-api)" 2> /dev/null | tr -d ' ')"
expect_true "the FastCGI socket is srw-rw---- sandbox:www-data" \
	test "$(stat -c '%A %U:%G' /run/sandbox/api.sock 2> /dev/null)" = "srw-rw---- sandbox:www-data"
expect_eq "/etc/sandbox/db_password is root:sandbox 0640" "root:sandbox 640" \
	"$(stat -c '%U:%G %a' /etc/sandbox/db_password 2> /dev/null)"
expect_eq "the TLS key is root's alone (0600)" "root 600" "$(stat -c '%U %a' /etc/sandbox/tls/privkey.pem 2> /dev/null)"

export SANDBOX_URL=https://$API_HOST SANDBOX_CACERT=/etc/sandbox/tls/fullchain.pem
export SANDBOX_CONFIG=/etc/sandbox/sandbox.conf SANDBOX_DB_SOCKET=/run/mysqld/mysqld.sock
TOKEN=$(jq -r '.token // empty' /root/sandbox-key-alice.json 2> /dev/null)
KEY_ID=$(jq -r '.id // empty' /root/sandbox-key-alice.json 2> /dev/null)
expect_true "the guide's key file holds a token" test -n "$TOKEN"

ctx "HTTPS via the guide's nginx site"
req GET /v1/health
expect_status 200 "GET /v1/health over https://$API_HOST (the guide's certificate)"
# shellcheck disable=SC2153 # submit sets JOB
submit '{"command":"echo hello from the guide","limits":{"wall_seconds":120}}' && GJOB=$JOB
await "${GJOB:-}" 300
expect_json '.status' succeeded
expect_json '.result.stdout' "hello from the guide"
expect_json '.result.usage.memory_peak_bytes > 0' true "memory_peak_bytes > 0 (memory.peak)"
expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup v2"))' true "limits: cgroup v2"
expect_json 'any(.result.diagnostics[]; startswith("limits: cgroup placement clone3 "))' true \
	"the job was born in its slot cgroup (clone3), under the installed unit"
req GET /v1/jobs/"${GJOB:-x}" '' -H 'Authorization:'
expect_status 401 "without the key: 401"
expect_true "nginx's access log (the guide's site) has the job's request" \
	grep -q "POST /v1/jobs " /var/log/nginx/sandbox-access.log
# (functions: expect_true prints its command on failure, and a secret is no argument)
_no_token_in_nginx_logs() { ! grep -rqF "$TOKEN" /var/log/nginx/; }
_no_token_in_journal() { ! journalctl -q --no-pager -o cat -b | grep -qF "$TOKEN"; }
_no_db_password_in_journal() { ! journalctl -q --no-pager -o cat -b | grep -qF -f /etc/sandbox/db_password; }
expect_true "no token in nginx's logs" _no_token_in_nginx_logs
expect_true "no token in the journal" _no_token_in_journal
expect_true "no DB password in the journal" _no_db_password_in_journal

ctx "retention timer"
expect_eq "sandbox-purge.timer is enabled" enabled "$(systemctl is-enabled sandbox-purge.timer 2>&1)"
expect_true "systemctl list-timers lists sandbox-purge.timer" \
	grep -q 'sandbox-purge.timer' <<< "$(systemctl list-timers --all --no-pager)"
systemctl start sandbox-purge.service
expect_eq "sandbox-purge.service ran (as sandbox) and succeeded" success \
	"$(systemctl show -p Result --value sandbox-purge.service)"

ctx "sandboxctl migrate, again"
before=$(sql "SELECT COUNT(*) FROM schema_migrations")
out=$(sandboxctl --config /etc/sandbox/sandbox.conf migrate 2>&1)
rc=$?
expect_eq "sandboxctl migrate on a current schema exits 0" 0 "$rc"
expect_eq "it applied nothing (schema_migrations unchanged)" "$before" "$(sql "SELECT COUNT(*) FROM schema_migrations")"
expect_eq "every schema file is recorded" "$(find /usr/share/sandbox/schema -name '*.sql' | wc -l)" "$before"
note "migrate: $(tr '\n' '|' <<< "$out")"

ctx "backup restored"
expect_true "the backup file is root's alone" test "$(stat -c '%U %a' /var/backups/sandbox/sandbox.sql.gz 2> /dev/null)" = "root 600"
expect_eq "the scratch database has every table" \
	"$(SQL_DB=information_schema sql "SELECT COUNT(*) FROM tables WHERE table_schema = 'sandbox'")" \
	"$(SQL_DB=information_schema sql "SELECT COUNT(*) FROM tables WHERE table_schema = 'sandbox_restore'")"
expect_eq "the guide's key is in the restored copy" 1 \
	"$(SQL_DB=sandbox_restore sql "SELECT COUNT(*) FROM api_keys WHERE id = '${KEY_ID:-x}'")"
expect_eq "the restored schema_migrations equals the live one" "$before" \
	"$(SQL_DB=sandbox_restore sql "SELECT COUNT(*) FROM schema_migrations")"
sql "DROP DATABASE sandbox_restore"

ctx "--check on a broken setting"
NB_UID=$(id -u nobody)
{
	cat /etc/sandbox/sandbox.conf
	echo "runner_uid_base = $NB_UID"
} > /etc/sandbox/broken-check.conf
chmod 0600 /etc/sandbox/broken-check.conf
out=$(systemd-run -p Delegate=yes --wait --pipe --quiet -- \
	/usr/local/bin/sandbox-runner --config /etc/sandbox/broken-check.conf --check 2>&1)
rc=$?
expect_eq "--check with runner_uid_base = nobody's uid ($NB_UID) exits 1" 1 "$rc"
expect_true "the slot-uids item fails, naming the uid and the account" \
	grep -qE "^fail  slot-uids +uid $NB_UID \(slot 0\) belongs to the account 'nobody'" <<< "$out"
expect_true "its fix follows" grep -qE '^ +fix: set runner_uid_base to a range no account uses' <<< "$out"
expect_true "the other items pass (cgroup, database, userns)" \
	grep -qE '^ok +cgroup ' <<< "$out"
note "--check: $(grep -E '^(fail|warn)' <<< "$out" | tr '\n' '|')" # (the guide's config: exit 0 in block 5)
grep -qE '^(ok|warn|fail) ' <<< "$out" || note "--check printed: $(head -c 600 <<< "$out" | tr '\n' '|')"
rm -f /etc/sandbox/broken-check.conf

echo "guide_and_checks_s $((SECONDS - T0))" >> "$TIMINGS"
finish
