# sandbox: job API (app/), runner (sandbox-runner/), the in-sandbox agent (agent/),
# shared code (common/).
# `make` builds build/sandbox-api and build/sandboxctl; `make test` runs every suite
# against a real MariaDB, nginx and bubblewrap; `make run` starts the local stack.

CC      ?= cc
PKGS    := jansson libmariadb fcgi libseccomp
BUILD   ?= build
PREFIX  ?= /usr/local

WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wwrite-strings -Werror
HARDEN  := -D_FORTIFY_SOURCE=3 -fstack-protector-strong -fPIE
CFLAGS  ?= -O2 -g
# One folder per subsystem (docs/ARCHITECTURE.md, "Folders"); each is on the include
# path, and tests/layout.py checks that the includes between them run one way.
RUNNER_DIRS := sandbox-runner/dispatch sandbox-runner/launch sandbox-runner/job \
               sandbox-runner/session sandbox-runner/deliver
APP_DIRS    := app/http app/jobs app/sessions app/mcp app/e2b app/admin
SRC_DIRS    := common agent $(APP_DIRS) $(RUNNER_DIRS) cli
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(addprefix -I,$(SRC_DIRS)) \
              -Itests/unit \
              $(shell pkg-config --cflags $(PKGS) libcurl 2>/dev/null)
LDHARD  := -pie -Wl,-z,relro,-z,now
LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# The command-line client links only Jansson and libcurl.
CLI_LIBS := $(shell pkg-config --libs jansson libcurl 2>/dev/null)

COMMON_SRC := $(wildcard common/*.c)
# Pure logic, linked into the unit tests (no FastCGI, no DB I/O at link time).
APP_LIB_SRC := app/http/metrics.c app/jobs/validate.c app/jobs/render.c app/http/http_util.c \
               app/jobs/jobcache.c app/http/router.c app/http/waiter.c app/sessions/svalidate.c \
               app/sessions/srender.c app/mcp/mcp.c app/e2b/connect.c
API_SRC    := $(wildcard app/http/*.c app/jobs/*.c app/sessions/*.c app/mcp/*.c app/e2b/*.c)
# E2B: pure (paths, error shapes), in the unit tests too.
APP_LIB_SRC += app/e2b/e2butil.c app/e2b/efsform.c
CTL_SRC    := $(wildcard app/admin/*.c) app/http/auth.c app/http/http_util.c
RUN_LIB_SRC := sandbox-runner/job/outcome.c sandbox-runner/launch/artname.c sandbox-runner/job/policy.c \
               sandbox-runner/launch/pump.c sandbox-runner/launch/bwstatus.c sandbox-runner/launch/retry.c \
               sandbox-runner/launch/profile.c sandbox-runner/launch/profile_file.c \
               sandbox-runner/launch/profile_host.c sandbox-runner/launch/scfilter.c \
               sandbox-runner/launch/cgroup.c sandbox-runner/launch/workspace.c agent/agentproto.c \
               sandbox-runner/session/sfiles.c sandbox-runner/session/sfentry.c \
               sandbox-runner/deliver/hooksign.c sandbox-runner/dispatch/reclaim.c \
               sandbox-runner/session/sports.c
# agent/: what runs inside a sandbox (the session agent, and the exec stub of a
# prewarmed job sandbox: one static binary, not the runner's) and the wire formats the
# runner speaks with them (agentproto, stubproto).
AGENT_SRC  := agent/agent.c agent/agentproto.c agent/stub.c
# SANDBOX_FAULTS (sandbox-runner/launch/fault.h): only in build/fault-runner and the unit tests.
FAULT_SRC  := sandbox-runner/launch/fault.c
# The webhook sender (sandbox-runner/deliver/) reads and renders a job as the API
# does and links libcurl: it is a binary of its own (build/sandbox-deliver), exec'd by
# the dispatcher, so that the runner binary, exec'd again for every supervisor, loads
# neither.
RUN_APP_SRC := app/jobs/jobs.c app/jobs/quota.c app/jobs/render.c app/jobs/validate.c app/http/auth.c \
               app/http/http_util.c
DELIVER_SRC := $(wildcard sandbox-runner/deliver/*.c) $(RUN_APP_SRC)
RUN_SRC    := $(filter-out $(RUN_LIB_SRC) $(FAULT_SRC),$(wildcard sandbox-runner/dispatch/*.c \
                sandbox-runner/launch/*.c sandbox-runner/job/*.c sandbox-runner/session/*.c)) \
              $(RUN_LIB_SRC)
RUN_LIBS   := $(LIBS)
DELIVER_LIBS := $(LIBS) $(shell pkg-config --libs libcurl 2>/dev/null)
# The command-line client (cli/): its pure parts are also linked into the unit tests.
CLI_LIB_SRC := cli/cliargs.c
CLI_SRC    := cli/sandbox.c cli/clirun.c cli/clijobs.c cli/clisession.c cli/cliexec.c \
              cli/clifiles.c cli/clireq.c cli/cliupload.c cli/cliwait.c cli/climsg.c \
              cli/clihttp.c $(CLI_LIB_SRC) common/strbuf.c common/util.c \
              common/sha256.c common/pathrules.c
UNIT_SRC   := $(wildcard tests/unit/*.c)

obj = $(patsubst %.c,$(BUILD)/$(1)/%.o,$(2))
HDRS := $(wildcard $(addsuffix /*.h,$(SRC_DIRS)) tests/unit/*.h)

.PHONY: all deps deps-service run up down test layout unit unit-asan integration bench bench-smoke clean install test-vm
.PHONY: test-galera
all: $(BUILD)/sandbox-api $(BUILD)/sandboxctl $(BUILD)/sandbox-runner $(BUILD)/sandbox-agent \
     $(BUILD)/sandbox $(BUILD)/sandbox-deliver

$(BUILD)/rel/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC $<"; $(CC) $(ALL_CFLAGS) $(HARDEN) -c $< -o $@

$(BUILD)/asan/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC(asan) $<"; $(CC) $(ALL_CFLAGS) -O1 -fsanitize=address,undefined \
	  -fno-omit-frame-pointer -fno-sanitize-recover=undefined -c $< -o $@

# The fault-injecting test build of the runner (sandbox-runner/launch/fault.h).
$(BUILD)/fault/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC(fault) $<"; $(CC) $(ALL_CFLAGS) $(HARDEN) -DSANDBOX_FAULT_INJECTION -c $< -o $@

$(BUILD)/sandbox-api: $(call obj,rel,$(API_SRC) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(LIBS)

$(BUILD)/sandboxctl: $(call obj,rel,$(CTL_SRC) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(LIBS)

$(BUILD)/sandbox-runner: $(call obj,rel,$(RUN_SRC) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(RUN_LIBS)

# The webhook delivery pass (sandbox-runner/deliver/deliver_main.c), exec'd by the dispatcher.
$(BUILD)/sandbox-deliver: $(call obj,rel,$(DELIVER_SRC) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(DELIVER_LIBS)

# The command-line client (cli/sandbox.c).
$(BUILD)/sandbox: $(call obj,rel,$(CLI_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(CLI_LIBS)

# Runs inside a session's sandbox with the sandbox's /usr: static (libc only), so it
# needs no file in there. Static PIE keeps ASLR.
$(BUILD)/sandbox-agent: $(AGENT_SRC) $(wildcard agent/*.h)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iagent $(HARDEN) -static-pie \
	  -Wl,-z,relro,-z,now -o $@ $(AGENT_SRC)

# The runner with ASan+LSan, for the job-loop leak check (tests/integration/leaks.sh).
$(BUILD)/asan-runner: $(call obj,asan,$(RUN_SRC) $(COMMON_SRC))
	$(CC) -fsanitize=address,undefined -o $@ $^ $(RUN_LIBS)

# The runner that reads SANDBOX_FAULTS, for tests/integration/contract.sh only: the
# release build above has no such code path.
$(BUILD)/fault-runner: $(call obj,fault,$(RUN_SRC) $(FAULT_SRC) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(RUN_LIBS)

# tests/unit/test_agent.c runs build/sandbox-agent (order-only: not linked in).
$(BUILD)/unit-tests: $(call obj,rel,$(UNIT_SRC) $(APP_LIB_SRC) $(RUN_LIB_SRC) $(CLI_LIB_SRC) $(FAULT_SRC) $(COMMON_SRC)) | $(BUILD)/sandbox-agent
	$(CC) $(LDHARD) -o $@ $^ $(LIBS) -lcunit

$(BUILD)/unit-tests-asan: $(call obj,asan,$(UNIT_SRC) $(APP_LIB_SRC) $(RUN_LIB_SRC) $(CLI_LIB_SRC) $(FAULT_SRC) $(COMMON_SRC)) | $(BUILD)/sandbox-agent
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LIBS) -lcunit

# The DB layer against the test stack's MariaDB (tests/run-integration.sh runs it).
$(BUILD)/db-tests: $(call obj,rel,tests/dbunit/test_db.c tests/unit/check.c sandbox-runner/job/store.c $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(LIBS) -lcunit

# Runs inside the sandbox in the security suite: tries each denied operation and
# prints the errno it got.
$(BUILD)/seccomp-probe: tests/security/probe.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

# Benchmarks (tests/bench/): the launch path without the DB, and claim latency.
BENCH_RUN_OBJ := $(filter-out sandbox-runner/dispatch/runner_main.c sandbox-runner/dispatch/dispatch.c \
                 $(RUN_APP_SRC),$(RUN_SRC))
$(BUILD)/bench-launch: $(call obj,rel,tests/bench/launch.c $(BENCH_RUN_OBJ) $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(LIBS)

$(BUILD)/bench-claim: $(call obj,rel,tests/bench/claim.c sandbox-runner/job/store.c $(COMMON_SRC))
	$(CC) $(LDHARD) -o $@ $^ $(LIBS)

# The job command of the job-start figure: no libc, a few hundred bytes, sent as an
# input file with each measured job.
$(BUILD)/bench-stamp: tests/bench/stamp.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Os -Wall -Wextra -Werror -static -nostdlib -fno-stack-protector \
		-fno-pie -no-pie -fno-asynchronous-unwind-tables -Wl,--build-id=none -Wl,-n -s \
		-o $@ $<

BENCH_BINS := $(BUILD)/bench-launch $(BUILD)/bench-claim $(BUILD)/bench-stamp

bench: all $(BENCH_BINS)
	@bash tests/bench/run.sh

bench-smoke: all $(BENCH_BINS)
	@bash tests/bench/run.sh --smoke

deps:
	@bash tests/deps.sh

# The packages only (no test clients, no npm registry needed): what `make run`/`up` need.
deps-service:
	@SANDBOX_DEPS_CLIENTS=0 bash tests/deps.sh

unit: $(BUILD)/unit-tests $(BUILD)/sandbox-agent
	SANDBOX_AGENT=$(BUILD)/sandbox-agent $(BUILD)/unit-tests

unit-asan: $(BUILD)/unit-tests-asan $(BUILD)/sandbox-agent
	SANDBOX_AGENT=$(BUILD)/sandbox-agent ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/unit-tests-asan

run: deps-service all
	@bash tests/stack.sh run

up: deps-service all
	@bash tests/stack.sh up

down:
	@bash tests/stack.sh down

integration: all $(BUILD)/seccomp-probe $(BUILD)/asan-runner $(BUILD)/fault-runner $(BUILD)/db-tests
	@bash tests/run-integration.sh

# The tree's shape: no product file over 900 lines, no include circle, includes between
# folders as docs/ARCHITECTURE.md's map says (tests/layout.py).
layout:
	@python3 tests/layout.py

test: deps
	$(MAKE) layout
	$(MAKE) all $(BUILD)/unit-tests $(BUILD)/unit-tests-asan
	$(MAKE) unit unit-asan
	$(MAKE) integration
	$(MAKE) bench-smoke

# The service on a three-node MariaDB Galera cluster, two API and two runner hosts
# (tests/galera/run.sh; root; SANDBOX_GALERA_JOBS, SANDBOX_GALERA_PORT).
test-galera: all
	@bash tests/galera/run.sh

# The cgroup v2 set in a QEMU guest (tests/vm/run.sh); FULL=1: every suite in the guest.
test-vm: deps all $(BUILD)/seccomp-probe $(BUILD)/asan-runner $(BUILD)/fault-runner $(BUILD)/db-tests $(BENCH_BINS)
	@FULL=$(FULL) bash tests/vm/run.sh

install: all
	install -D -m 0755 $(BUILD)/sandbox-api $(DESTDIR)$(PREFIX)/bin/sandbox-api
	install -D -m 0755 $(BUILD)/sandboxctl $(DESTDIR)$(PREFIX)/bin/sandboxctl
	install -D -m 0755 $(BUILD)/sandbox-runner $(DESTDIR)$(PREFIX)/bin/sandbox-runner
	install -D -m 0755 $(BUILD)/sandbox $(DESTDIR)$(PREFIX)/bin/sandbox
	install -D -m 0644 cli/sandbox.1 $(DESTDIR)$(PREFIX)/share/man/man1/sandbox.1
	# the session agent: runner_agent_path's default; root-owned, not writable by others
	install -D -m 0755 $(BUILD)/sandbox-agent $(DESTDIR)/usr/lib/sandbox/sandbox-agent
	# the webhook delivery pass: runner_deliver_path's default
	install -D -m 0755 $(BUILD)/sandbox-deliver $(DESTDIR)/usr/lib/sandbox/sandbox-deliver
	install -d $(DESTDIR)/usr/share/sandbox/schema
	install -m 0644 schema/*.sql $(DESTDIR)/usr/share/sandbox/schema/

clean:
	rm -rf $(BUILD)
