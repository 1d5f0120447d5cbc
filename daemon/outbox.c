#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "hooks/auth.h"
#include "mail/smtp.h"
#include "child.h"
#include "forge-reply.h"
#include "outbox.h"
#include "publish.h"
#include "store.h"

#define OUTBOX_BACKOFF_MIN (30ULL * 1000000)
#define OUTBOX_BACKOFF_MAX (3600ULL * 1000000)
/* entries one child delivers before the daemon looks again */
#define OUTBOX_RUN_MAX 50
/* How long a claim on an entry lasts: past any SMTP session's or git
 * push's time-outs.  An instance on another host that dies while it
 * delivers leaves the entry to another after this. */
#define OUTBOX_CLAIM_USEC (15ULL * 60 * 1000000)
#define OUTBOX_OWNER_MAX 128
#define OUTBOX_STOP_WAIT_MS 10000

struct outbox {
	struct store *store;
	const struct config *cfg;
	const struct outbox_transport *mail;
	void *mail_state;
	int64_t max_tries;
	struct child child; /* the delivering process */
	struct wake wake;
};

/* ---- spool transport: one file per message, named by its key ---- */

struct spool {
	char *dir;
};

static int spool_open(const struct outbox_conf *c, void **ret_state, char **ret_error)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int r;

	if (!sp)
		return -ENOMEM;
	sp->dir = strdup(c->spool_dir);
	if (!sp->dir) {
		free(sp);
		return -ENOMEM;
	}
	r = mkdir_p(sp->dir, 0750);
	if (r < 0) {
		if (ret_error && asprintf(ret_error, "cannot create %s: %s", sp->dir,
					  strerror(-r)) < 0)
			*ret_error = NULL;
		free(sp->dir);
		free(sp);
		return r;
	}
	*ret_state = sp;
	return 0;
}

/* A key is untrusted-ish (it carries a Message-ID): a safe name, led by
 * a digest of the whole key, since making it safe (and short) maps
 * different keys to one text, and a second mail would then be taken as
 * delivered. */
void outbox_spool_name(const char *key, char *out, size_t n)
{
	char hex[AUTH_SHA256_HEX_LEN + 1];
	size_t j;

	if (n < 20 || auth_hmac_sha256_hex("kfix-spool", NULL, key, strlen(key), hex) < 0) {
		snprintf(out, n, "unnamed");
		return;
	}
	j = (size_t)snprintf(out, n, "%.16s-", hex);

	for (size_t i = 0; key[i] && j + 1 < n; i++) {
		char c = key[i];

		out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				   (c >= '0' && c <= '9') || c == '-' || c == '.' ||
				   c == '@' || c == '_'
			? c
			: '_';
	}
	out[j] = '\0';
}

static int spool_deliver(void *state, const struct store_outbox *o, char **ret_error)
{
	struct spool *sp = state;
	_cleanup_free_ char *path = NULL;
	char name[256];
	int r;

	outbox_spool_name(o->idem_key, name, sizeof(name));
	if (asprintf(&path, "%s/%s.eml", sp->dir, name) < 0)
		return -ENOMEM;
	/* delivered before a crash hid the fact from the store: done */
	if (access(path, F_OK) == 0)
		return 0;
	r = write_file_atomic(path, o->payload, strlen(o->payload), 0640);
	if (r < 0) {
		if (ret_error && asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0)
			*ret_error = NULL;
		/* a full or read-only disk may recover: not permanent */
		return -EAGAIN;
	}
	return 0;
}

static void spool_close(void *state)
{
	struct spool *sp = state;

	if (sp)
		free(sp->dir);
	free(sp);
}

static const struct outbox_transport spool_transport = {
	.name = "spool",
	.open = spool_open,
	.deliver = spool_deliver,
	.close = spool_close,
};

/* ---- smtp transport: libcurl submission, recipients from To/Cc ---- */

struct smtp {
	char *url, *user, *password;
};

static void smtp_close(void *state)
{
	struct smtp *sm = state;

	if (!sm)
		return;
	free(sm->url);
	free(sm->user);
	if (sm->password)
		explicit_bzero(sm->password, strlen(sm->password));
	free(sm->password);
	free(sm);
}

static int smtp_open(const struct outbox_conf *c, void **ret_state, char **ret_error)
{
	struct smtp *sm;

	/* not configured: mail waits in the outbox (see outbox_new) */
	if (!c->smtp_url)
		return -ENOENT;
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		return -ENOMEM;
	sm->url = strdup(c->smtp_url);
	sm->user = c->smtp_user ? strdup(c->smtp_user) : NULL;
	sm->password = c->smtp_password ? strdup(c->smtp_password) : NULL;
	if (!sm->url || (c->smtp_user && !sm->user) || (c->smtp_password && !sm->password)) {
		smtp_close(sm);
		return -ENOMEM;
	}
	*ret_state = sm;
	return 0;
}

static int smtp_deliver(void *state, const struct store_outbox *o, char **ret_error)
{
	struct smtp *sm = state;
	struct smtp_opts so = { .url = sm->url, .user = sm->user, .password = sm->password };
	_cleanup_strv_ char **rcpts = NULL;
	_cleanup_free_ char *from = NULL;
	size_t len = strlen(o->payload);
	int r;

	r = smtp_envelope(o->payload, len, &from, &rcpts, ret_error);
	if (r < 0)
		return r == -ENOMEM ? -EAGAIN : -EINVAL; /* a broken message never heals */
	return smtp_send(&so, o->payload, len, from, rcpts, ret_error);
}

static const struct outbox_transport smtp_transport = {
	.name = "smtp",
	.open = smtp_open,
	.deliver = smtp_deliver,
	.close = smtp_close,
};

static const struct outbox_transport *const transports[] = {
	&spool_transport,
	&smtp_transport,
	NULL,
};

static const struct outbox_transport *transport_find(const char *name)
{
	for (size_t i = 0; transports[i]; i++)
		if (streq(transports[i]->name, name))
			return transports[i];
	return NULL;
}

void outbox_conf_clear(struct outbox_conf *c)
{
	if (c->smtp_password)
		explicit_bzero(c->smtp_password, strlen(c->smtp_password));
	free(c->spool_dir);
	free(c->smtp_url);
	free(c->smtp_user);
	free(c->smtp_password);
	*c = (struct outbox_conf){};
}

static int error_dup(char **ret_error, int r, const char *msg)
{
	if (ret_error)
		*ret_error = strdup(msg);
	return r;
}

/* Only the chosen transport's keys are read: a spool setup needs no
 * SMTP password at hand. */
static int smtp_conf_from_config(const struct config *cfg, struct outbox_conf *c,
				 char **ret_error)
{
	const char *url, *user;
	int r;

	if (config_get_string(cfg, "mail", NULL, "smtp-url", &url) < 0)
		return 0;
	if (!(c->smtp_url = strdup(url)))
		return -ENOMEM;
	if (config_get_string(cfg, "mail", NULL, "smtp-user", &user) < 0)
		return 0;
	if (!(c->smtp_user = strdup(user)))
		return -ENOMEM;
	r = config_get_secret(cfg, "mail", NULL, "smtp-password", &c->smtp_password);
	if (r == -ENOENT)
		c->smtp_password = NULL;
	else if (r < 0)
		return error_dup(ret_error, r, "cannot read mail.smtp-password");
	return 0;
}

int outbox_conf_from_config(const struct config *cfg, struct outbox_conf *ret,
			    char **ret_error)
{
	_cleanup_(outbox_conf_clear) struct outbox_conf c = {};
	const char *tname;
	int r = config_get_int(cfg, "mail", NULL, "max-tries", &c.max_tries);

	if (r >= 0)
		r = config_get_string(cfg, "mail", NULL, "transport", &tname);
	if (r < 0)
		return r;
	c.transport = transport_find(tname);
	if (c.transport == &spool_transport &&
	    config_get_path(cfg, "mail", NULL, "spool-dir", &c.spool_dir) < 0)
		return error_dup(ret_error, -EINVAL,
				 "mail.transport is spool but mail.spool-dir is not set");
	if (c.transport == &smtp_transport) {
		r = smtp_conf_from_config(cfg, &c, ret_error);
		if (r < 0)
			return r;
	}
	*ret = c;
	c = (struct outbox_conf){};
	return 0;
}

int outbox_new(const struct config *cfg, struct store *store,
	       struct outbox **ret, char **ret_error)
{
	_cleanup_(outbox_conf_clear) struct outbox_conf conf = {};
	_cleanup_free_ struct outbox *o = NULL;
	int r;

	r = outbox_conf_from_config(cfg, &conf, ret_error);
	if (r < 0)
		return r;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->store = store;
	o->cfg = cfg;
	o->max_tries = conf.max_tries;
	o->mail = conf.transport;
	if (o->mail) {
		r = o->mail->open(&conf, &o->mail_state, ret_error);
		if (r == -ENOENT && o->mail == &smtp_transport)
			o->mail = NULL; /* the default transport, not set up yet */
		else if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(o);
	return 0;
}

void outbox_set_config(struct outbox *o, const struct config *cfg)
{
	o->cfg = cfg;
}

void outbox_free(struct outbox *o)
{
	if (!o)
		return;
	/* a delivery in flight is given a moment to finish and be recorded:
	 * a message sent but not marked would be sent again after the restart */
	child_stop(&o->child, OUTBOX_STOP_WAIT_MS);
	if (o->mail)
		o->mail->close(o->mail_state);
	free(o);
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	struct outbox *o = userdata;

	if (si->si_code != CLD_EXITED || si->si_status != 0) {
		char owner[OUTBOX_OWNER_MAX];
		int64_t n = 0;

		log_warning("outbox process %d %s %d", (int)o->child.pid,
			    si->si_code == CLD_EXITED ? "exited with status" : "killed by signal",
			    si->si_status);
		/* what it had claimed is due again now, not in 15 minutes */
		child_owner_name(owner, sizeof(owner), getpid());
		if (store_outbox_release_owner(o->store, owner, &n) < 0)
			log_warning("outbox: cannot release the claims of %s: %s", owner,
				    store_errmsg(o->store));
	}
	child_exited(&o->child);
	wake_call(&o->wake);
	return 0;
}

bool outbox_busy(const struct outbox *o)
{
	return o->child.pid > 0;
}

void outbox_set_wake(struct outbox *o, struct wake wake)
{
	o->wake = wake;
}

int outbox_spawn(struct outbox *o, sd_event *event, const char *self_exe,
		 const char *config_path)
{
	_cleanup_(store_outbox_freep) struct store_outbox *e = NULL;
	int r;

	if (o->child.pid > 0)
		return 0;
	r = store_outbox_next(o->store, &e);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	return child_spawn(&o->child, event, self_exe, config_path, "--run-outbox", on_child, o);
}

static uint64_t backoff(int tries)
{
	uint64_t d = OUTBOX_BACKOFF_MIN;

	for (int i = 0; i < tries && d < OUTBOX_BACKOFF_MAX; i++)
		d *= 2;
	return MIN(d, OUTBOX_BACKOFF_MAX);
}

/* 1 when delivered, 0 when retried later or parked. */
static int deliver_one(struct outbox *o, struct store_outbox *e)
{
	_cleanup_free_ char *err = NULL;
	char idbuf[32];
	int r;

	snprintf(idbuf, sizeof(idbuf), "%lld", (long long)e->bug_id);
	if (streq(e->kind, "push")) {
		r = publish_push_deliver(o->cfg, e, &err);
	} else if (streq(e->kind, "forge")) {
		r = forge_reply_deliver(o->cfg, o->store, e, &err);
	} else if (streq(e->kind, "mail") && o->mail) {
		r = o->mail->deliver(o->mail_state, e, &err);
	} else {
		/* no transport for this kind is configured yet: wait for one */
		return store_outbox_mark_retry(o->store, e->id,
					       "no transport configured for this kind",
					       OUTBOX_BACKOFF_MAX);
	}
	if (r >= 0) {
		log_job(LOG_INFO, e->bug_id ? idbuf : NULL, NULL,
			r == 1 && streq(e->kind, "forge") ? "outbox: %s was already on the forge (%s)"
							    : "outbox: delivered %s via %s",
			e->idem_key,
			streq(e->kind, "push") ? "git push" : streq(e->kind, "forge") ? "forge API" : o->mail->name);
		r = store_outbox_mark_sent(o->store, e->id);
		return r < 0 ? r : 1;
	}
	if (r == -EAGAIN && e->tries + 1 < o->max_tries) {
		log_job(LOG_WARNING, e->bug_id ? idbuf : NULL, NULL,
			"outbox: %s: %s (will retry)", e->idem_key, err ? err : "failed");
		return store_outbox_mark_retry(o->store, e->id, err, backoff(e->tries));
	}
	log_job(LOG_ERR, e->bug_id ? idbuf : NULL, NULL, "outbox: %s parked: %s",
		e->idem_key, err ? err : strerror(-r));
	return store_outbox_park(o->store, e->id, err ? err : strerror(-r));
}

int outbox_run(struct outbox *o, const char *owner, int max, int *ret_sent)
{
	int sent = 0;

	for (int i = 0; i < max; i++) {
		_cleanup_(store_outbox_freep) struct store_outbox *e = NULL;
		int r = store_outbox_claim(o->store, owner, OUTBOX_CLAIM_USEC, &e);

		if (r == -ENOENT)
			break;
		if (r < 0)
			return r;
		r = deliver_one(o, e);
		if (r < 0)
			return r;
		if (r > 0)
			sent++; /* delivered, not merely attempted */
	}
	if (ret_sent)
		*ret_sent = sent;
	return 0;
}

int outbox_run_child(const char *config_path)
{
	_cleanup_(store_closep) struct store *store = NULL;
	_cleanup_free_ char *err = NULL;
	struct config *cfg = NULL;
	struct outbox *o = NULL;
	char owner[OUTBOX_OWNER_MAX];
	int r, sent = 0;

	/* an SMTP session of a dead daemon must not go on by itself */
	if (!child_bind_to_parent() || child_open(config_path, &cfg, &store) < 0)
		return 1;
	/* the claims are the daemon's, whose death releases them (the
	 * process is bound to it, so its parent is the daemon) */
	child_owner_name(owner, sizeof(owner), getppid());
	r = outbox_new(cfg, store, &o, &err);
	if (r < 0)
		log_error("cannot start the outbox: %s", err ? err : strerror(-r));
	else if ((r = outbox_run(o, owner, OUTBOX_RUN_MAX, &sent)) < 0)
		log_warning("outbox: %s (%s)", strerror(-r), store_errmsg(store));
	outbox_free(o);
	config_free(cfg);
	return r < 0 ? 1 : 0;
}
