#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "common/conf.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/strutil.h"
#include "front-internal.h"
#include "mailq.h"
#include "front.h"

static void secret_free(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void front_conf_clear(struct front_conf *c)
{
	strv_free(c->listen);
	secret_free(c->api_token);
	secret_free(c->admin_token);
	free(c->tls_cert);
	free(c->tls_key);
	*c = (struct front_conf){};
}

/* An unset token is NULL: that scope has no token. */
static int token_from_config(const struct config *cfg, const char *key, char **ret)
{
	int r = config_get_secret(cfg, "http", NULL, key, ret);

	if (r == -ENOENT) {
		*ret = NULL;
		return 0;
	}
	return r;
}

static int limits_from_config(const struct config *cfg, struct http_limits *l)
{
	int64_t maxconn, per_ip;
	int r = config_get_size(cfg, "http", NULL, "max-body", &l->max_body);

	if (r >= 0)
		r = config_get_size(cfg, "http", NULL, "max-header", &l->max_header);
	if (r >= 0)
		r = config_get_int(cfg, "http", NULL, "max-connections", &maxconn);
	if (r >= 0)
		r = config_get_int(cfg, "http", NULL, "max-connections-per-ip", &per_ip);
	if (r >= 0)
		r = config_get_duration(cfg, "http", NULL, "timeout", &l->timeout_usec);
	if (r >= 0)
		r = config_get_duration(cfg, "http", NULL, "request-timeout", &l->request_usec);
	if (r >= 0)
		r = config_get_size(cfg, "http", NULL, "max-buffered", &l->max_buffered);
	if (r < 0)
		return r;
	l->max_connections = (unsigned)maxconn;
	l->max_per_ip = (unsigned)per_ip;
	return 0;
}

int front_conf_from_config(const struct config *cfg, struct front_conf *ret)
{
	_cleanup_(front_conf_clear) struct front_conf c = {};
	int r = config_get_list(cfg, "http", NULL, "listen", &c.listen);

	if (r >= 0)
		r = limits_from_config(cfg, &c.limits);
	if (r >= 0)
		r = config_get_size(cfg, "http", NULL, "max-forge-body", &c.max_forge_body);
	if (r >= 0)
		r = token_from_config(cfg, "api-token", &c.api_token);
	if (r >= 0)
		r = token_from_config(cfg, "admin-token", &c.admin_token);
	if (r < 0)
		return r;
	/* checked at start only: a reload keeps the running TLS */
	if (config_get_path(cfg, "http", NULL, "tls-cert", &c.tls_cert) < 0)
		c.tls_cert = NULL;
	else if (config_get_path(cfg, "http", NULL, "tls-key", &c.tls_key) < 0)
		c.tls_key = NULL;
	*ret = c;
	c = (struct front_conf){};
	return 0;
}

void front_free(struct front *f)
{
	if (!f)
		return;
	if (f->flush)
		intake_free(f);
	/* the requests it holds are answered before the server goes */
	mailq_free(f->mailq);
	http_server_free(f->http);
	metrics_free(f->metrics);
	sd_event_unref(f->event);
	free(f->state_dir);
	free(f);
}

void front_set_config(struct front *f, const struct config *cfg)
{
	if (f) {
		f->cfg = cfg;
		if (f->mailq && mailq_set_config(f->mailq, cfg) < 0)
			log_warning("the mail queue keeps its old [mail] limits");
	}
}

static int set_tokens(struct front *f, const struct front_conf *c)
{
	return http_server_set_tokens(f->http, c->api_token, c->admin_token);
}

/* [http] listen is ignored when systemd passed the sockets. */
static int reload_listeners(struct front *f, const struct front_conf *c)
{
	const char *failed = NULL;
	int r;

	if (f->n_fds > 0)
		return 0;
	r = http_server_set_listen(f->http, c->listen, &failed);
	if (r < 0) {
		log_error("reload: cannot listen on %s: %s", failed ? failed : "?", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < http_server_n_listeners(f->http); i++) {
		char addr[80];

		if (http_server_local_address(f->http, i, addr, sizeof(addr)) >= 0)
			log_info("listening on %s", addr);
	}
	return 0;
}

int front_reload(struct front *f, const struct config *cfg)
{
	_cleanup_(front_conf_clear) struct front_conf c = {}, old = {};
	_cleanup_free_ char *err = NULL;
	int r;

	/* everything that can fail on a mistake in the file is checked
	 * before anything changes */
	r = webhooks_check(cfg, &err);
	if (r >= 0)
		r = feeds_check(f->feeds, cfg, &err);
	if (r < 0) {
		log_error("reload: %s", err ? err : strerror(-r));
		return r;
	}
	r = front_conf_from_config(cfg, &c);
	if (r >= 0)
		r = set_tokens(f, &c);
	if (r >= 0)
		r = reload_listeners(f, &c);
	if (r < 0) {
		if (front_conf_from_config(f->cfg, &old) < 0 || set_tokens(f, &old) < 0)
			log_warning("reload: the API tokens could not be restored");
		return r;
	}
	f->cfg = cfg;
	/* checked above: only a lack of memory makes these fail */
	r = webhooks_reload(f->hooks, cfg, &err);
	if (r >= 0)
		r = feeds_reload(f->feeds, cfg, &err);
	if (r < 0)
		log_error("reload: webhooks or feeds partly kept: %s", err ? err : strerror(-r));
	return 0;
}

bool front_alive(const struct front *f)
{
	return !f || !f->http || http_server_alive(f->http);
}

static int load_tls(struct front *f, const struct front_conf *c)
{
	_cleanup_free_ char *cpem = NULL, *kpem = NULL;
	size_t n;
	int r;

	if (!c->tls_cert)
		return 0;
	if (!c->tls_key) {
		log_error("[http] tls-cert needs tls-key");
		return -EINVAL;
	}
	r = read_file_bounded(c->tls_cert, 1024 * 1024, &cpem, &n);
	if (r >= 0)
		r = read_file_bounded(c->tls_key, 1024 * 1024, &kpem, &n);
	if (r < 0) {
		log_error("cannot read the TLS certificate or key: %s", strerror(-r));
		return r;
	}
	r = http_server_set_tls(f->http, cpem, kpem);
	explicit_bzero(kpem, strlen(kpem));
	return r;
}

static int listen_all(struct front *f, const struct front_conf *c, int n_fds)
{
	int r;

	for (int i = 0; i < n_fds; i++) {
		r = http_server_add_fd(f->http, SD_LISTEN_FDS_START + i);
		if (r < 0) {
			log_error("cannot serve socket %d from systemd: %s", i, strerror(-r));
			return r;
		}
	}
	if (n_fds > 0)
		return 0;
	for (size_t i = 0; c->listen && c->listen[i]; i++) {
		r = http_server_listen(f->http, c->listen[i]);
		if (r < 0) {
			log_error("cannot listen on %s: %s", c->listen[i], strerror(-r));
			return r;
		}
	}
	return 0;
}

int front_new(sd_event *event, const struct config *cfg, struct store *store,
	      int n_fds, const char *self_exe, const char *config_path,
	      struct front **ret)
{
	_cleanup_(front_freep) struct front *f = calloc(1, sizeof(*f));
	_cleanup_(front_conf_clear) struct front_conf c = {};
	_cleanup_free_ char *err = NULL;
	int r;

	if (!f)
		return -ENOMEM;
	f->event = sd_event_ref(event);
	f->cfg = cfg;
	f->store = store;
	f->n_fds = n_fds;
	r = config_state_path(cfg, NULL, &f->state_dir);
	if (r >= 0)
		r = front_conf_from_config(cfg, &c);
	if (r >= 0)
		r = metrics_new(&f->metrics);
	if (r >= 0)
		r = http_server_new(event, &c.limits, f->metrics, &f->http);
	/* forge events are small JSON; only mail needs max-body */
	if (r >= 0)
		r = http_server_set_body_limit(f->http, "/hooks/forge", c.max_forge_body);
	if (r >= 0)
		r = set_tokens(f, &c);
	if (r >= 0)
		r = load_tls(f, &c);
	if (r >= 0)
		r = api_setup(f);
	if (r >= 0)
		r = dashboard_setup(f);
	if (r >= 0)
		r = mailq_new(event, store, cfg, self_exe, config_path, &f->mailq);
	if (r < 0)
		return r;
	r = intake_setup(f, &err);
	if (r < 0) {
		log_error("%s", err ? err : strerror(-r));
		return r;
	}
	r = listen_all(f, &c, n_fds);
	if (r < 0)
		return r;
	for (size_t i = 0; i < http_server_n_listeners(f->http); i++) {
		char addr[80];

		if (http_server_local_address(f->http, i, addr, sizeof(addr)) >= 0)
			log_info("listening on %s", addr);
	}
	*ret = TAKE_PTR(f);
	return 0;
}
