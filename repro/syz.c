/* syz reproducers: syzbot's repro options, and the syz-execprog command
 * line that replays a program with them in the guest. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/strutil.h"
#include "run.h"

#define OPTS_MAX (64 * 1024)
#define PROCS_MAX 64

static const char *const sandboxes[] = { "none", "setuid", "namespace", "android" };

void syz_opts_default(struct syz_opts *o)
{
	*o = (struct syz_opts){ .threaded = true, .repeat = true, .procs = 1, .fault_call = -1 };
	strcpy(o->sandbox, "none");
}

/* The options come from outside (a dashboard, a mail): every value is
 * checked against what syz-execprog accepts, so that nothing but known
 * words and bounded numbers ever reaches the guest's command line. */
static int opts_check(struct syz_opts *o)
{
	bool known = false;

	if (o->sandbox[0] == '\0')
		strcpy(o->sandbox, "none"); /* the executor has no empty sandbox */
	for (size_t i = 0; i < ARRAY_SIZE(sandboxes); i++)
		known |= streq(o->sandbox, sandboxes[i]);
	if (!known || o->procs < 1 || o->procs > PROCS_MAX || o->repeat_times < 0 ||
	    o->repeat_times > 1000000 || o->fault_call < -1 ||
	    o->fault_call > 100000 || o->fault_nth < 0 || o->fault_nth > 1000000)
		return -EINVAL;
	return 0;
}

static int get_int(json_t *j, const char *key, int *v)
{
	json_t *x = json_object_get(j, key);

	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < -1 ||
	    json_integer_value(x) > 100000000)
		return -EINVAL;
	*v = (int)json_integer_value(x);
	return 0;
}

static int get_bool(json_t *j, const char *key, bool *v)
{
	json_t *x = json_object_get(j, key);

	if (!x)
		return 0;
	if (!json_is_boolean(x))
		return -EINVAL;
	*v = json_is_true(x);
	return 0;
}

static int parse_json(const char *text, size_t len, struct syz_opts *o)
{
	_cleanup_json_ json_t *j = NULL;
	json_error_t err;
	const char *sb;
	int r;

	r = json_parse_bounded(text, len, OPTS_MAX, &j, &err);
	if (r < 0 || !json_is_object(j))
		return -EINVAL;
	/* Absent keys are false or zero, as syzkaller writes them.  Keys
	 * for flags that only some syz-execprog builds know (slowdown,
	 * sandbox_arg) are left out: an unknown flag stops execprog. */
	o->threaded = o->collide = o->repeat = o->fault = false;
	if ((r = get_bool(j, "threaded", &o->threaded)) < 0 ||
	    (r = get_bool(j, "collide", &o->collide)) < 0 ||
	    (r = get_bool(j, "repeat", &o->repeat)) < 0 ||
	    (r = get_bool(j, "fault", &o->fault)) < 0 ||
	    (r = get_int(j, "repeat_times", &o->repeat_times)) < 0 ||
	    (r = get_int(j, "procs", &o->procs)) < 0 ||
	    (r = get_int(j, "fault_call", &o->fault_call)) < 0 ||
	    (r = get_int(j, "fault_nth", &o->fault_nth)) < 0)
		return r;
	sb = json_get_str(j, "sandbox");
	if (json_object_get(j, "sandbox") && !sb)
		return -EINVAL;
	if (sb) {
		if (strlen(sb) >= sizeof(o->sandbox))
			return -EINVAL;
		strcpy(o->sandbox, sb);
	}
	return 0;
}

/* The older form: {Threaded:true Collide:true Repeat:true Procs:8
 * Sandbox:namespace Fault:false FaultCall:-1 FaultNth:0 ...}. */
static int parse_legacy(const char *text, size_t len, struct syz_opts *o)
{
	_cleanup_free_ char *s = strndup(text, len);
	char *save = NULL, *tok;

	if (!s)
		return -ENOMEM;
	for (tok = strtok_r(s, "{} \t\n", &save); tok; tok = strtok_r(NULL, "{} \t\n", &save)) {
		char *val = strchr(tok, ':');
		bool b;
		int n = 0;

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		b = streq(val, "true");
		if (!b && !streq(val, "false") && parse_int(val, &n) < 0 &&
		    !streq(tok, "Sandbox"))
			return -EINVAL;
		if (streq(tok, "Threaded"))
			o->threaded = b;
		else if (streq(tok, "Collide"))
			o->collide = b;
		else if (streq(tok, "Repeat"))
			o->repeat = b;
		else if (streq(tok, "Fault"))
			o->fault = b;
		else if (streq(tok, "Procs"))
			o->procs = n;
		else if (streq(tok, "FaultCall"))
			o->fault_call = n;
		else if (streq(tok, "FaultNth"))
			o->fault_nth = n;
		else if (streq(tok, "Sandbox")) {
			if (strlen(val) >= sizeof(o->sandbox))
				return -EINVAL;
			strcpy(o->sandbox, val);
		}
	}
	return 0;
}

int syz_opts_parse(const char *text, size_t len, struct syz_opts *ret)
{
	struct syz_opts o;
	size_t i = 0;
	int r;

	syz_opts_default(&o);
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (len - i > OPTS_MAX || i == len || text[i] != '{')
		return -EINVAL;
	/* JSON has quoted keys; the older form does not. */
	r = i + 1 < len && memchr(text + i, '"', len - i) ? parse_json(text + i, len - i, &o)
							  : parse_legacy(text + i, len - i, &o);
	if (r < 0)
		return r;
	r = opts_check(&o);
	if (r < 0)
		return r;
	*ret = o;
	return 0;
}

int syz_opts_from_program(const char *prog, size_t len, struct syz_opts *ret)
{
	const char *eol;

	/* syzbot's programs start with "# {options}". */
	if (len < 3 || strncmp(prog, "# {", 3) != 0)
		return -ENOENT;
	eol = memchr(prog, '\n', len);
	return syz_opts_parse(prog + 2, (size_t)((eol ? eol : prog + len) - prog - 2), ret);
}

static int push_fmt(char ***v, const char *fmt, ...) _printf_(2, 3);
static int push_fmt(char ***v, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return strv_push(v, s);
}

int syz_execprog_argv(const struct syz_opts *in, const char *execprog, const char *executor,
		      const char *prog, char ***ret)
{
	_cleanup_strv_ char **v = NULL;
	struct syz_opts o = *in;
	int r;

	r = opts_check(&o);
	if (r < 0)
		return r;
	/* As syzkaller's own reproduction does: threaded and repeated
	 * execution only raise the chance to hit the bug.  Repeating
	 * forever is bounded by the run's time limit. */
	o.threaded = o.repeat = true;
	if (strv_push(&v, execprog) < 0 || push_fmt(&v, "-executor=%s", executor) < 0 ||
	    strv_push(&v, "-arch=amd64") < 0 || push_fmt(&v, "-sandbox=%s", o.sandbox) < 0 ||
	    push_fmt(&v, "-procs=%d", o.procs) < 0 ||
	    push_fmt(&v, "-repeat=%d", o.repeat ? o.repeat_times : 1) < 0 ||
	    push_fmt(&v, "-threaded=%s", o.threaded ? "true" : "false") < 0 ||
	    push_fmt(&v, "-collide=%s", o.collide ? "true" : "false") < 0)
		return -ENOMEM;
	if (o.fault && o.fault_call >= 0 &&
	    (push_fmt(&v, "-fault_call=%d", o.fault_call) < 0 ||
	     push_fmt(&v, "-fault_nth=%d", o.fault_nth) < 0))
		return -ENOMEM;
	if (strv_push(&v, prog) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(v);
	return 0;
}

int syz_tools_find(const char *dir, char **ret_bin, char **ret_missing)
{
	static const char *const tools[] = { "syz-execprog", "syz-executor" };
	_cleanup_free_ char *bin = NULL;

	if (!dir || !*dir)
		return -EINVAL;
	if (asprintf(&bin, "%s/bin/linux_amd64", dir) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
		_cleanup_free_ char *p = NULL;

		if (asprintf(&p, "%s/%s", bin, tools[i]) < 0)
			return -ENOMEM;
		if (access(p, R_OK) < 0) {
			if (ret_missing)
				*ret_missing = TAKE_PTR(p);
			return -ENOENT;
		}
	}
	*ret_bin = TAKE_PTR(bin);
	return 0;
}
