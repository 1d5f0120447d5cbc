/* Every configuration key kfix understands.  kfix.conf(5) documents the
 * same table; keep them in step. */
#include "config.h"

#include <stddef.h>

#include "conf.h"

#define S(sec, k, d) { sec, false, k, CONFIG_STRING, d, 0, 0, NULL }
#define NS(sec, k, d) { sec, true, k, CONFIG_STRING, d, 0, 0, NULL }
#define I(sec, named, k, d, lo, hi) { sec, named, k, CONFIG_INT, d, lo, hi, NULL }
#define T(sec, named, k, type, d) { sec, named, k, type, d, 0, 0, NULL }
#define E(sec, named, k, d, vals) { sec, named, k, CONFIG_ENUM, d, 0, 0, vals }

const struct config_key config_schema[] = {
	/* [kfix]: the daemon itself */
	T("kfix", false, "state-dir", CONFIG_PATH, "/var/lib/kfix"),
	T("kfix", false, "cache-dir", CONFIG_PATH, "/var/cache/kfix"),
	T("kfix", false, "text-hosts", CONFIG_LIST, "syzkaller.appspot.com"),
	E("kfix", false, "log-level", "info",
	  "emerg|alert|crit|err|warning|notice|info|debug"),
	I("kfix", false, "workers", "2", 1, 64),
	I("kfix", false, "build-slots", "1", 1, 64),
	I("kfix", false, "vm-slots", "2", 1, 256),
	I("kfix", false, "llm-slots", "2", 1, 64),
	T("kfix", false, "job-timeout", CONFIG_DURATION, "4h"),
	I("kfix", false, "job-attempts", "3", 1, 100),
	I("kfix", false, "llm-day-tokens", "0", 0, INT64_C(1000000000000)),
	S("kfix", "llm-day-cost", "0"),
	I("kfix", false, "llm-bug-tokens", "0", 0, INT64_C(1000000000000)),
	S("kfix", "llm-bug-cost", "0"),
	T("kfix", false, "lease", CONFIG_DURATION, "10min"),
	T("kfix", false, "retry-delay", CONFIG_DURATION, "1min"),
	T("kfix", false, "self-test-jobs", CONFIG_BOOL, "false"),
	T("kfix", false, "self-test-step", CONFIG_DURATION, "0"),

	/* [llm "name"]: a model endpoint */
	E("llm", true, "provider", "openai", "openai|anthropic"),
	NS("llm", "url", NULL),
	NS("llm", "model", NULL),
	T("llm", true, "api-key", CONFIG_SECRET, NULL),
	I("llm", true, "max-tokens", "8192", 1, 1000000),
	NS("llm", "temperature", "0.2"),
	T("llm", true, "timeout", CONFIG_DURATION, "10min"),
	T("llm", true, "connect-timeout", CONFIG_DURATION, "30s"),
	I("llm", true, "concurrency", "2", 1, 64),
	I("llm", true, "retries", "5", 0, 100),
	T("llm", true, "backoff", CONFIG_DURATION, "1s"),
	T("llm", true, "max-backoff", CONFIG_DURATION, "1min"),
	NS("llm", "price-input", "0"),
	NS("llm", "price-output", "0"),
	T("llm", true, "replay", CONFIG_PATH, NULL),

	/* [agent]: the repair workflow */
	S("agent", "llm", NULL),
	S("agent", "iterate-llm", NULL),
	T("agent", false, "record", CONFIG_BOOL, "false"),
	T("agent", false, "prompts-dir", CONFIG_PATH, NULL),
	T("agent", false, "knowledge-base", CONFIG_PATH, NULL),
	I("agent", false, "branching", "3", 1, 16),
	I("agent", false, "depth", "3", 1, 16),
	I("agent", false, "max-iterations", "12", 1, 1000),
	I("agent", false, "max-tokens", "2000000", 1000, 1000000000),
	S("agent", "max-cost", "25"),
	T("agent", false, "wall-clock", CONFIG_DURATION, "4h"),
	I("agent", false, "stagnation", "4", 1, 1000),
	T("agent", false, "context-budget", CONFIG_SIZE, "48K"),
	I("agent", false, "locations", "3", 1, 16),
	I("agent", false, "base-runs", "3", 1, 100),
	I("agent", false, "validate-runs", "5", 1, 100),
	I("agent", false, "max-hunks", "5", 1, 1000),
	I("agent", false, "max-files", "2", 1, 1000),
	I("agent", false, "max-lines", "60", 1, 100000),
	T("agent", false, "checkpatch", CONFIG_BOOL, "true"),
	T("agent", false, "minimise", CONFIG_BOOL, "true"),

	/* [tree "name"]: a watched kernel tree */
	NS("tree", "url", NULL),
	T("tree", true, "path", CONFIG_PATH, NULL),
	NS("tree", "branch", "master"),
	T("tree", true, "config", CONFIG_PATH, NULL),
	NS("tree", "syzbot-namespace", NULL),
	NS("tree", "moderation-address", NULL),
	NS("tree", "push-remote", NULL),
	T("tree", true, "push-token", CONFIG_SECRET, NULL),
	T("tree", true, "push-ssh-key", CONFIG_PATH, NULL),
	T("tree", true, "push-known-hosts", CONFIG_PATH, NULL),
	T("tree", true, "allow-commands", CONFIG_LIST, NULL),
	NS("tree", "command-auth", "dkim"),
	I("tree", true, "priority", "0", -1000, 1000),
	T("tree", true, "fetch-interval", CONFIG_DURATION, "1h"),
	T("tree", true, "ask-syzbot-test", CONFIG_BOOL, "false"),

	/* [vm "name"]: a pool of test VMs on one VM host */
	E("vm", true, "backend", "qemu", "qemu"),
	NS("vm", "ssh-host", "localhost"),
	I("vm", true, "ssh-port", "22", 1, 65535),
	NS("vm", "ssh-user", "kfix"),
	T("vm", true, "ssh-key", CONFIG_PATH, NULL),
	T("vm", true, "known-hosts", CONFIG_PATH, NULL),
	T("vm", true, "image", CONFIG_PATH, NULL),
	T("vm", true, "guest-key", CONFIG_PATH, NULL),
	T("vm", true, "guest-known-hosts", CONFIG_PATH, NULL),
	I("vm", true, "count", "1", 1, 256),
	I("vm", true, "memory", "1024", 128, 1048576),
	I("vm", true, "cpus", "2", 1, 256),
	NS("vm", "qemu", "qemu-system-x86_64"),
	T("vm", true, "boot-timeout", CONFIG_DURATION, "5min"),
	NS("vm", "guest-user", "root"),
	NS("vm", "workdir", "/tmp/kfix-vm"),
	NS("vm", "cmdline", ""),
	T("vm", true, "run-timeout", CONFIG_DURATION, "5min"),
	T("vm", true, "syzkaller", CONFIG_PATH, NULL),
	I("vm", true, "runs", "3", 1, 100),
	I("vm", true, "max-attempts", "6", 1, 1000),

	/* [build "name"]: a build host */
	NS("build", "host", "local"),
	I("build", true, "ssh-port", "22", 1, 65535),
	NS("build", "ssh-user", "kfix"),
	T("build", true, "ssh-key", CONFIG_PATH, NULL),
	T("build", true, "known-hosts", CONFIG_PATH, NULL),
	I("build", true, "jobs", "0", 0, 1024),
	T("build", true, "ccache", CONFIG_BOOL, "false"),
	NS("build", "sandbox", "bwrap"),
	T("build", true, "dir", CONFIG_PATH, NULL),
	T("build", true, "timeout", CONFIG_DURATION, "2h"),
	NS("build", "remote-dir", "kfix-build"),

	/* [mail]: outgoing mail and the bot identity */
	S("mail", "from", NULL),
	E("mail", false, "transport", "smtp", "smtp|spool"),
	S("mail", "smtp-url", NULL),
	S("mail", "smtp-user", NULL),
	T("mail", false, "smtp-password", CONFIG_SECRET, NULL),
	T("mail", false, "spool-dir", CONFIG_PATH, NULL),
	I("mail", false, "max-tries", "20", 1, 1000),
	T("mail", false, "dkim-keys", CONFIG_PATH, NULL),
	T("mail", false, "trusted-authserv-id", CONFIG_STRING, NULL),
	T("mail", false, "syzbot-auth", CONFIG_STRING, "dkim"),

	/* [http]: the listener (when not socket-activated) */
	T("http", false, "listen", CONFIG_LIST, NULL),
	T("http", false, "max-body", CONFIG_SIZE, "10M"),
	T("http", false, "max-header", CONFIG_SIZE, "32K"),
	T("http", false, "commit-delay", CONFIG_DURATION, "2ms"),
	I("http", false, "max-connections", "256", 1, 65536),
	I("http", false, "max-connections-per-ip", "32", 1, 65536),
	T("http", false, "request-timeout", CONFIG_DURATION, "2min"),
	T("http", false, "max-buffered", CONFIG_SIZE, "64M"),
	T("http", false, "max-forge-body", CONFIG_SIZE, "1M"),
	T("http", false, "timeout", CONFIG_DURATION, "30s"),
	T("http", false, "tls-cert", CONFIG_PATH, NULL),
	T("http", false, "tls-key", CONFIG_PATH, NULL),
	T("http", false, "api-token", CONFIG_SECRET, NULL),
	T("http", false, "admin-token", CONFIG_SECRET, NULL),
	T("http", false, "url", CONFIG_STRING, NULL),

	/* [archive "name"]: a followed public-inbox archive */
	NS("archive", "url", NULL),
	T("archive", true, "poll-interval", CONFIG_DURATION, "5min"),
	I("archive", true, "max-messages", "1000", 1, 100000),

	/* [feed "name"]: a syzbot-style dashboard */
	NS("feed", "url", NULL),
	NS("feed", "namespace", "upstream"),
	NS("feed", "tree", NULL),
	T("feed", true, "interval", CONFIG_DURATION, "10min"),
	T("feed", true, "token", CONFIG_SECRET, NULL),
	T("feed", true, "c-repro-only", CONFIG_BOOL, "true"),
	I("feed", true, "max-per-day", "10", 0, 100000),
	T("feed", true, "trees", CONFIG_LIST, NULL),
	T("feed", true, "subsystems", CONFIG_LIST, NULL),
	T("feed", true, "crash-types", CONFIG_LIST, NULL),
	T("feed", true, "request-interval", CONFIG_DURATION, "1s"),
	T("feed", true, "timeout", CONFIG_DURATION, "1min"),
	T("feed", true, "backoff", CONFIG_DURATION, "1min"),
	T("feed", true, "max-text-size", CONFIG_SIZE, "4M"),
	T("feed", true, "max-repro-size", CONFIG_SIZE, "1M"),

	/* [hook "name"]: an authenticated webhook */
	E("hook", true, "type", NULL, "mail|syzbot|forge"),
	E("hook", true, "provider", "kfix", "kfix|github|gitea|forgejo|gitlab"),
	T("hook", true, "secret", CONFIG_SECRET, NULL),
	T("hook", true, "replay-window", CONFIG_DURATION, "5min"),
	NS("hook", "base-url", "https://syzkaller.appspot.com"),
	T("hook", true, "allow-users", CONFIG_LIST, NULL),
	{ NULL, false, NULL, 0, NULL, 0, 0, NULL },
};
