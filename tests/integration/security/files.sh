# tests/integration/security/files.sh: security.sh's cases 7 and 8: what the host does with a job's files (links planted in
# the workspace, artifact names).
# Sourced by security.sh at this case's place in the run: its helpers, variables and
# checks are the suite's (the same counts, in the same order).
# Job commands are single-quoted on purpose: they expand inside the sandbox.
# shellcheck shell=bash disable=SC2016

# ---------------------------------------------------------------- 7. symlinks

CASE="symlinks"
CANARY_DIR=$(mktemp -d /tmp/sec-canary-XXXXXX)
at_exit "rm -rf '$CANARY_DIR'"
chmod 0755 "$CANARY_DIR"
CANARY=$CANARY_DIR/canary
CANARY_TEXT="canary-$RUN-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
(umask 077 && printf '%s\n' "$CANARY_TEXT" > "$CANARY")
chmod 0600 "$CANARY"
chown 0:0 "$CANARY"
mkdir -m 0755 "$CANARY_DIR/sub"
printf '%s\n' "$CANARY_TEXT" > "$CANARY_DIR/sub/file"
canary_state() { stat -c '%u:%g %a %s %h' "$CANARY" 2> /dev/null; sha256sum < "$CANARY" 2> /dev/null; ls -A "$CANARY_DIR" | tr '\n' ' '; }
CANARY_BEFORE=$(canary_state)
all_artifacts=$T_DIR/artifacts

# collect_artifacts: fetch every artifact of $JOB_JSON into $all_artifacts (appended)
collect_artifacts() {
	local id p
	id=$(jf .id)
	for p in $(jf '.result.artifacts[]?.path'); do
		req GET "/v1/jobs/$id/artifacts/$p"
		cat "$BODY" >> "$all_artifacts"
	done
}
: > "$all_artifacts"

run "$CASE: artifacts dir is a link" "ln -s '$CANARY_DIR' out && ls -l out" '{"artifacts":"out"}'
expect_state succeeded
expect_eq "$CASE: no artifact collected through the link" "[]" "$(jf '.result.artifacts | tojson')"
expect_match "$CASE: diagnostics: the artifacts directory is a symbolic link" 'artifacts directory out: is a symbolic link' "$(jf '.result.diagnostics[]?')"
collect_artifacts
check_clean

run "$CASE: artifacts path through a link" "ln -s '$CANARY_DIR' link" '{"artifacts":"link/sub"}'
expect_state succeeded
expect_eq "$CASE: nothing collected through an intermediate link" "[]" "$(jf '.result.artifacts | tojson')"
collect_artifacts
check_clean

run "$CASE: links inside the artifacts dir" "mkdir out && ln -s '$CANARY' out/x && ln -s '$CANARY_DIR' out/d && ln -s '$CANARY_DIR/sub/file' out/f && echo hi > out/y; ln '$CANARY' out/h; echo \"HARDLINK rc=\$?\"" '{"artifacts":"out"}'
expect_state succeeded
expect_match "$CASE: a hard link to the canary is impossible" '^HARDLINK rc=1$' "$(stdout)"
expect_eq "$CASE: only the regular file is collected" '["out/y"]' "$(jf '[.result.artifacts[]?.path] | tojson')"
diags=$(jf '.result.diagnostics[]?')
for l in out/x out/d out/f; do
	expect_match "$CASE: $l skipped as a symbolic link" "artifact $l skipped: symbolic link" "$diags"
done
collect_artifacts
check_clean

run "$CASE: links left for cleanup" "ln -s '$CANARY' c1; ln -s '$CANARY_DIR' c2; ln -s / c3; mkdir -p deep/er; ln -s '$CANARY_DIR' deep/er/c4; ln -s '$CANARY' .hidden; chmod 000 deep; echo left"
expect_state succeeded
check_clean

CANARY_AFTER=$(canary_state)
expect_eq "$CASE: the canary keeps its owner, mode, size, link count, content and directory" "$CANARY_BEFORE" "$CANARY_AFTER"
expect_true "$CASE: the canary's content is in no artifact" bash -c '! grep -Fq -- "$1" "$2"' _ "$CANARY_TEXT" "$all_artifacts"
expect_eq "$CASE: the canary's sub file is intact" "$CANARY_TEXT" "$(cat "$CANARY_DIR/sub/file" 2> /dev/null)"

# ---------------------------------------------------------------- 8. artifact names

CASE="artifact names"
# The job names its artifacts. Names that could pass for service text in the
# diagnostics, or that the API could not list or serve, are not collected: one
# counting line per kind says so; no job-controlled byte reaches the diagnostics.
# Every listed artifact must download, byte for byte, by its percent-encoded path.
cmd=$(
	cat << 'EOF'
mkdir -p out
n=0
w() { printf '%s' "$2" > "$1" && n=$((n + 1)); }
# control characters and invalid UTF-8: 10 names (a directory counts once)
w "$(printf 'out/x\ncommand timed out')" fake1
w "$(printf 'out/y\nrunner lost during execution')" fake2
w "$(printf 'out/cr\rcommand timed out')" cr
w "$(printf 'out/esc\033[2J')" esc
w "$(printf 'out/del\177')" del
w "$(printf 'out/nel\302\205runner lost during execution')" nel
w "$(printf 'out/bad\377')" bad
w "$(printf 'out/overlong\300\257')" overlong
mkdir "$(printf 'out/dir\tx')" && w "$(printf 'out/dir\tx/inner')" inner
ln -s /etc/hostname "$(printf 'out/link\ncommand timed out')"
# a backslash: the API refuses it in a path
w 'out/back\slash' backslash
# downloadable: spaces, %, ?, #, +, &, =, ;, unicode, a nested directory
w 'out/with space' space
w 'out/100%' percent
w 'out/what?' question
w 'out/hash#tag' hash
w 'out/plus+sign' plus
w 'out/a&b=c;d' amp
w 'out/café ✓ 😀' unicode
mkdir -p 'out/sub dir' && w 'out/sub dir/x y' nested
# the length limit: 1024 bytes is the longest path, 1025 is over
a=$(printf '%0250d' 0 | tr 0 a)
mkdir -p "out/$a/$a/$a/$a"
w "out/$a/$a/$a/$a/$(printf '%016d' 0 | tr 0 b)" len1024
w "out/$a/$a/$a/$a/$(printf '%017d' 0 | tr 0 c)" len1025
# the download limit: 1991 bytes fully percent-encoded (the API keeps 2047 bytes of
# request path) is the longest, 1994 is over
s=$(printf '%250s' '')
mkdir -p "out/$s/$s"
w "out/$s/$s/ab$(printf '%159s' '')" enc1991
w "out/$s/$s/ab$(printf '%160s' '')" enc1994
echo "WROTE $n"
EOF
)
run "$CASE" "$cmd" '{"artifacts":"out"}'
expect_state succeeded
expect_eq "$CASE: the job wrote its 22 files" "WROTE 22" "$(stdout)"
diags=$(jf '.result.diagnostics[]?')
expect_eq "$CASE: diagnostics: one line counts the control-character and invalid UTF-8 names" \
	1 "$(jq '[.result.diagnostics[] | select(. == "artifacts skipped: 10 names with control characters or invalid UTF-8")] | length' "$JOB_JSON")"
expect_eq "$CASE: diagnostics: one line counts the backslash name" \
	1 "$(jq '[.result.diagnostics[] | select(. == "artifacts skipped: 1 name with a backslash (not downloadable)")] | length' "$JOB_JSON")"
expect_eq "$CASE: diagnostics: one line counts the two over-long paths" \
	1 "$(jq '[.result.diagnostics[] | select(. == "artifacts skipped: 2 paths longer than 1024 bytes (or 1991 bytes percent-encoded)")] | length' "$JOB_JSON")"
expect_eq "$CASE: no other diagnostic about artifacts" "" \
	"$(jq -r '.result.diagnostics[] | select(test("artifact") and (startswith("artifacts skipped: ") | not))' "$JOB_JSON")"
for fake in "command timed out" "runner lost during execution"; do
	expect_eq "$CASE: no diagnostic reads \"$fake\" on a succeeded job" 0 \
		"$(jq --arg f "$fake" '[.result.diagnostics[] | select(contains($f))] | length' "$JOB_JSON")"
done
expect_eq "$CASE: every diagnostic is printable ASCII" true \
	"$(jq '[.result.diagnostics[] | test("^[ -~]*$")] | all' "$JOB_JSON")"
a250=$(printf '%0250d' 0 | tr 0 a)
s250=$(printf '%250s' '')
want=$(jq -cn --arg l "out/$a250/$a250/$a250/$a250/$(printf '%016d' 0 | tr 0 b)" \
	--arg e "out/$s250/$s250/ab$(printf '%159s' '')" \
	'[$e, $l, "out/100%", "out/a&b=c;d", "out/café ✓ 😀", "out/hash#tag", "out/plus+sign",
	  "out/sub dir/x y", "out/what?", "out/with space"] | sort')
expect_eq "$CASE: exactly the servable names are collected" "$want" \
	"$(jq -c '[.result.artifacts[]?.path] | sort' "$JOB_JSON")"
# Every listed artifact downloads: each path percent-encoded whole ('/' too, as
# encodeURIComponent or jq's @uri do) and component by component.
id=$(jf .id)
jq -c '.result.artifacts[]?' "$JOB_JSON" > "$T_DIR/arts"
while read -r art; do
	p=$(jq -r .path <<< "$art")
	sha=$(jq -r .sha256 <<< "$art")
	size=$(jq -r .size <<< "$art")
	short=$(printf '%s' "$p" | head -c 40 | cat -v | tr '\n' ' ')
	for enc in "$(jq -rn --arg p "$p" '$p | @uri')" "$(jq -rn --arg p "$p" '$p | split("/") | map(@uri) | join("/")')"; do
		req GET "/v1/jobs/$id/artifacts/$enc"
		expect_eq "$CASE: GET '$short...' (${#p} bytes, ${#enc} encoded) -> 200, $size bytes, its sha256" \
			"200 $size $sha" "$STATUS $(wc -c < "$BODY") $(sha256sum < "$BODY" | cut -d' ' -f1)"
	done
done < "$T_DIR/arts"
expect_eq "$CASE: the 1024-byte path's content" len1024 \
	"$(req GET "/v1/jobs/$id/artifacts/$(jq -rn --arg p "out/$a250/$a250/$a250/$a250/$(printf '%016d' 0 | tr 0 b)" '$p | @uri')"; cat "$BODY")"
check_clean
