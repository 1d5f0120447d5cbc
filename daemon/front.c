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
		if (f->mailq)
			mailq_set_config(f->mailq, cfg);
	}
}

static int load_secrets(struct front *f);

/* The listen addresses of cfg, for a reload; [http] listen is
 * ignored when systemd passed the sockets. */
static int reload_listeners(struct front *f, const struct config *cfg)
{
	_cleanup_strv_ char **addrs = NULL;
	const char *failed = NULL;
	int r;

	if (f->n_fds > 0)
		return 0;
	r = config_get_list(cfg, "http", NULL, "listen", &addrs);
	if (r < 0 && r != -ENOENT)
		return r;
	r = http_server_set_listen(f->http, addrs, &failed);
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
	_cleanup_free_ char *err = NULL;
	const struct config *old = f->cfg;
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
	f->cfg = cfg;
	r = load_secrets(f);
	if (r >= 0)
		r = reload_listeners(f, cfg);
	if (r < 0) {
		f->cfg = old;
		if (load_secrets(f) < 0)
			log_warning("reload: the API tokens could not be restored");
		return r;
	}
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

static int load_limits(const struct config *cfg, struct http_limits *l)
{
	int64_t maxconn = 256, per_ip = 32;
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
	l->max_connections = (unsigned)maxconn;
	l->max_per_ip = (unsigned)per_ip;
	return r;
}

static int load_secrets(struct front *f)
{
	_cleanup_free_ char *rt = NULL, *at = NULL;
	int r = config_get_secret(f->cfg, "http", NULL, "api-token", &rt);

	if (r < 0 && r != -ENOENT)
		return r;
	r = config_get_secret(f->cfg, "http", NULL, "admin-token", &at);
	if (r < 0 && r != -ENOENT)
		return r;
	r = http_server_set_tokens(f->http, rt, at);
	if (rt)
		explicit_bzero(rt, strlen(rt));
	if (at)
		explicit_bzero(at, strlen(at));
	return r;
}

static int load_tls(struct front *f)
{
	_cleanup_free_ char *cert = NULL, *key = NULL, *cpem = NULL, *kpem = NULL;
	size_t n;
	int r;

	if (config_get_path(f->cfg, "http", NULL, "tls-cert", &cert) < 0)
		return 0;
	r = config_get_path(f->cfg, "http", NULL, "tls-key", &key);
	if (r < 0) {
		log_error("[http] tls-cert needs tls-key");
		return -EINVAL;
	}
	r = read_file_bounded(cert, 1024 * 1024, &cpem, &n);
	if (r >= 0)
		r = read_file_bounded(key, 1024 * 1024, &kpem, &n);
	if (r < 0) {
		log_error("cannot read the TLS certificate or key: %s", strerror(-r));
		return r;
	}
	r = http_server_set_tls(f->http, cpem, kpem);
	explicit_bzero(kpem, strlen(kpem));
	return r;
}

static int listen_all(struct front *f, int n_fds)
{
	_cleanup_strv_ char **addrs = NULL;
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
	if (config_get_list(f->cfg, "http", NULL, "listen", &addrs) < 0)
		return 0;
	for (size_t i = 0; addrs && addrs[i]; i++) {
		r = http_server_listen(f->http, addrs[i]);
		if (r < 0) {
			log_error("cannot listen on %s: %s", addrs[i], strerror(-r));
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
	_cleanup_free_ char *err = NULL;
	struct http_limits limits = { 0 };
	int r;

	if (!f)
		return -ENOMEM;
	f->event = sd_event_ref(event);
	f->cfg = cfg;
	f->store = store;
	f->n_fds = n_fds;
	r = config_state_path(cfg, NULL, &f->state_dir);
	if (r >= 0)
		r = load_limits(cfg, &limits);
	if (r >= 0)
		r = metrics_new(&f->metrics);
	if (r >= 0)
		r = http_server_new(event, &limits, f->metrics, &f->http);
	if (r >= 0) {
		/* forge events are small JSON; only mail needs max-body */
		uint64_t forge = 1u << 20;

		r = config_get_size(cfg, "http", NULL, "max-forge-body", &forge);
		if (r >= 0)
			r = http_server_set_body_limit(f->http, "/hooks/forge", forge);
	}
	if (r >= 0)
		r = load_secrets(f);
	if (r >= 0)
		r = load_tls(f);
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
	r = listen_all(f, n_fds);
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
