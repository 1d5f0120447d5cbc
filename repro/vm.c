#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/strutil.h"
#include "vm.h"

static const struct vm_backend *const backends[] = { &vm_backend_qemu };

const struct vm_backend *vm_backend_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++)
		if (streq(backends[i]->name, name))
			return backends[i];
	return NULL;
}

void vm_exec_result_free(struct vm_exec_result *r)
{
	free(r->output);
	r->output = NULL;
}

void vm_opts_free(struct vm_opts *o)
{
	free(o->name);
	free(o->backend);
	free(o->ssh_host);
	free(o->ssh_user);
	free(o->ssh_key);
	free(o->known_hosts);
	free(o->image);
	free(o->guest_user);
	free(o->guest_key);
	free(o->guest_known_hosts);
	free(o->qemu);
	free(o->workdir);
	free(o->cmdline);
	free(o->syzkaller);
	*o = (struct vm_opts){ 0 };
}

static int get_str(const struct config *cfg, const char *name, const char *key, char **ret)
{
	const char *v = NULL;
	int r = config_get_string(cfg, "vm", name, key, &v);

	if (r == -ENOENT) {
		*ret = NULL;
		return 0;
	}
	if (r < 0)
		return r;
	*ret = strdup(v);
	return *ret ? 0 : -ENOMEM;
}

static int get_path(const struct config *cfg, const char *name, const char *key, char **ret)
{
	int r = config_get_path(cfg, "vm", name, key, ret);

	if (r == -ENOENT) {
		*ret = NULL;
		return 0;
	}
	return r;
}

static int get_int(const struct config *cfg, const char *name, const char *key, int *ret)
{
	int64_t v;
	int r = config_get_int(cfg, "vm", name, key, &v);

	if (r < 0)
		return r;
	*ret = (int)v;
	return 0;
}

int vm_opts_from_config(const struct config *cfg, const char *name, struct vm_opts *ret)
{
	_cleanup_(vm_opts_free) struct vm_opts o = { 0 };
	int r = 0;

	o.name = strdup(name);
	if (!o.name)
		return -ENOMEM;
	if ((r = get_str(cfg, name, "backend", &o.backend)) < 0 ||
	    (r = get_str(cfg, name, "ssh-host", &o.ssh_host)) < 0 ||
	    (r = get_str(cfg, name, "ssh-user", &o.ssh_user)) < 0 ||
	    (r = get_path(cfg, name, "ssh-key", &o.ssh_key)) < 0 ||
	    (r = get_path(cfg, name, "known-hosts", &o.known_hosts)) < 0 ||
	    (r = get_path(cfg, name, "image", &o.image)) < 0 ||
	    (r = get_str(cfg, name, "guest-user", &o.guest_user)) < 0 ||
	    (r = get_path(cfg, name, "guest-key", &o.guest_key)) < 0 ||
	    (r = get_path(cfg, name, "guest-known-hosts", &o.guest_known_hosts)) < 0 ||
	    (r = get_str(cfg, name, "qemu", &o.qemu)) < 0 ||
	    (r = get_str(cfg, name, "workdir", &o.workdir)) < 0 ||
	    (r = get_str(cfg, name, "cmdline", &o.cmdline)) < 0 ||
	    (r = get_path(cfg, name, "syzkaller", &o.syzkaller)) < 0 ||
	    (r = get_int(cfg, name, "ssh-port", &o.ssh_port)) < 0 ||
	    (r = get_int(cfg, name, "count", &o.count)) < 0 ||
	    (r = get_int(cfg, name, "memory", &o.memory)) < 0 ||
	    (r = get_int(cfg, name, "cpus", &o.cpus)) < 0 ||
	    (r = get_int(cfg, name, "runs", &o.runs)) < 0 ||
	    (r = get_int(cfg, name, "max-attempts", &o.max_attempts)) < 0 ||
	    (r = config_get_bool(cfg, "vm", name, "leak-check", &o.leak_check)) < 0 ||
	    (r = config_get_duration(cfg, "vm", name, "boot-timeout", &o.boot_timeout_usec)) < 0 ||
	    (r = config_get_duration(cfg, "vm", name, "run-timeout", &o.run_timeout_usec)) < 0)
		return r;
	*ret = o;
	o = (struct vm_opts){ 0 };
	return 0;
}
