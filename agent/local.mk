# agent module: LLM providers, integrity gates, trajectory, the workflow.
noinst_LIBRARIES += agent/libagent.a
agent_libagent_a_SOURCES = \
	agent/llm.c agent/llm.h agent/llm-internal.h agent/llm-cassette.c \
	agent/llm-openai.c agent/llm-anthropic.c \
	agent/udiff.c agent/udiff-internal.h \
	agent/diagnose.c agent/diagnose.h agent/diagnose-llm.c \
	agent/crashinfo.c agent/crashinfo-internal.h \
	agent/gates.c agent/gates.h agent/gates-internal.h \
	agent/gates-path.c agent/gates-resources.c \
	agent/edits.c agent/edits.h agent/explore.c agent/explore.h \
	agent/trajectory.c agent/trajectory.h \
	agent/search.c agent/search.h \
	agent/kb.c agent/kb.h agent/fixcompare.c agent/fixcompare.h \
	agent/fixcompare-equiv.c agent/fixcompare-judge.c agent/fixcompare-internal.h \
	agent/prompt.c agent/prompt.h \
	agent/repair.c agent/repair.h agent/repair-internal.h \
	agent/repair-llm.c agent/repair-probe.c agent/repair-explain.c agent/repair-search.c \
	agent/rerun.c \
	agent/toolstack.c agent/toolstack.h
agent_libagent_a_CFLAGS = $(AM_CFLAGS) $(LIBCURL_CFLAGS) $(JANSSON_CFLAGS) $(LIBGIT2_CFLAGS)
AGENT_LIBS = agent/libagent.a $(LIBCURL_LIBS) $(JANSSON_LIBS) $(LIBGIT2_LIBS)

check_PROGRAMS += tests/unit/test-llm
TESTS += tests/unit/test-llm
tests_unit_test_llm_SOURCES = tests/unit/test-llm.c tests/unit/llm-server.h
tests_unit_test_llm_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_llm_LDADD = $(AGENT_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/agent/llm-server.py

check_PROGRAMS += tests/unit/test-explore
TESTS += tests/unit/test-explore
tests_unit_test_explore_SOURCES = tests/unit/test-explore.c
tests_unit_test_explore_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_explore_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-gates
TESTS += tests/unit/test-gates
tests_unit_test_gates_SOURCES = tests/unit/test-gates.c
tests_unit_test_gates_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_gates_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

CTL_EXTRA_SOURCES += daemon/ctl-check-patch.c daemon/ctl-explore.c daemon/ctl-repair.c daemon/ctl-trace.c
TESTS += tests/integration/check-patch.sh
EXTRA_DIST += tests/integration/check-patch.sh
CLEANFILES += -r tests/cache

# Prompts are data, installed under PKGDATADIR/prompts.
agentpromptsdir = $(pkgdatadir)/prompts
dist_agentprompts_DATA = \
	agent/prompts/system.txt agent/prompts/localise.txt agent/prompts/probe.txt \
	agent/prompts/hypotheses.txt agent/prompts/review.txt agent/prompts/patch.txt \
	agent/prompts/reflect.txt agent/prompts/distil.txt agent/prompts/explain.txt \
	agent/prompts/iterate.txt agent/prompts/changes.txt agent/prompts/critique.txt \
	agent/prompts/expert.txt \
	agent/prompts/tools.json

check_PROGRAMS += tests/unit/test-agent-loop
TESTS += tests/unit/test-agent-loop
tests_unit_test_agent_loop_SOURCES = tests/unit/test-agent-loop.c
tests_unit_test_agent_loop_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agent_loop_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-repair
TESTS += tests/unit/test-repair
tests_unit_test_repair_SOURCES = tests/unit/test-repair.c tests/unit/llm-server.h
tests_unit_test_repair_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_repair_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)
TESTS += tests/integration/repair-cli.sh
EXTRA_DIST += tests/integration/repair-cli.sh

# Fuzzing the readers of untrusted text; saved inputs replayed in make check.
check_PROGRAMS += tests/fuzz/replay-agent
TESTS += tests/fuzz/replay-agent
tests_fuzz_replay_agent_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-agent.c
tests_fuzz_replay_agent_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus-agent"'
tests_fuzz_replay_agent_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS)
EXTRA_DIST += tests/fuzz/corpus-agent
check_PROGRAMS += tests/fuzz/replay-explore
TESTS += tests/fuzz/replay-explore
tests_fuzz_replay_explore_SOURCES = tests/fuzz/replay-main.c tests/fuzz/fuzz-explore.c
tests_fuzz_replay_explore_CPPFLAGS = $(AM_CPPFLAGS) -DREPLAY_CORPUS='"tests/fuzz/corpus-explore"'
tests_fuzz_replay_explore_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS)
EXTRA_DIST += tests/fuzz/corpus-explore
if FUZZING
# coverage feedback needs the agent's readers instrumented
agent_libagent_a_CFLAGS += -fsanitize=fuzzer-no-link
noinst_PROGRAMS += tests/fuzz/fuzz-agent
FUZZ_BINS += tests/fuzz/fuzz-agent
tests_fuzz_fuzz_agent_SOURCES = tests/fuzz/fuzz-agent.c
tests_fuzz_fuzz_agent_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_agent_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_agent_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS)
noinst_PROGRAMS += tests/fuzz/fuzz-explore
FUZZ_BINS += tests/fuzz/fuzz-explore
tests_fuzz_fuzz_explore_SOURCES = tests/fuzz/fuzz-explore.c
tests_fuzz_fuzz_explore_CFLAGS = $(AM_CFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_explore_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_CFLAGS)
tests_fuzz_fuzz_explore_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS)
endif

# kfixctl explore: the agent's exploration tools from the command line.
TESTS += tests/integration/explore-cli.sh
EXTRA_DIST += tests/integration/explore-cli.sh tests/kernel/explore.sh

check_PROGRAMS += tests/unit/test-fixcompare
TESTS += tests/unit/test-fixcompare
tests_unit_test_fixcompare_SOURCES = tests/unit/test-fixcompare.c
tests_unit_test_fixcompare_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_fixcompare_LDADD = $(AGENT_LIBS) $(REPRO_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-udiff
TESTS += tests/unit/test-udiff
tests_unit_test_udiff_SOURCES = tests/unit/test-udiff.c
tests_unit_test_udiff_CFLAGS = $(UNIT_CFLAGS) $(LIBGIT2_CFLAGS)
tests_unit_test_udiff_LDADD = $(AGENT_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-diagnose
TESTS += tests/unit/test-diagnose
tests_unit_test_diagnose_SOURCES = tests/unit/test-diagnose.c
tests_unit_test_diagnose_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_diagnose_LDADD = $(AGENT_LIBS) $(COMMON_LIBS) $(CMOCKA_LIBS)
