/* Symbolisation of "func+0xOFF/0xSIZE" frames with a vmlinux's DWARF
 * (elfutils libdw), in process: one dwfl session per call, one symbol
 * table lookup and one scope walk per frame, inlined frames expanded the
 * way addr2line -i (and syzkaller) print them:
 *
 *   inner_helper file.c:12 [inline]
 *   outer_func+0x10/0x40 file.c:30
 */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "report-internal.h"

#define SYMBOLIZE_OUT_MAX (4 * REPORT_TEXT_MAX)
#define INLINE_DEPTH_MAX 32

/* The frame of a line: "[<ffffffff8123>] func+0x1a/0x2b" or "RIP: 0010:func+0x1/0x2". */
static const char frame_re[] =
	"(?:\\[\\<(?:[0-9a-f]+)\\>\\])?[ \\t]+(?:[0-9]+:)?([a-zA-Z0-9_.]+)\\+0x([0-9a-f]+)/0x([0-9a-f]+)";

struct sym {
	const char *name; /* owned by libdw */
	GElf_Addr addr;
	GElf_Xword size;
};

struct symbolizer {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct sym *syms;
	size_t n_syms;
};

static void symbolizer_done(struct symbolizer *s)
{
	free(s->syms);
	if (s->dwfl)
		dwfl_end(s->dwfl);
}

static int cmp_sym(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int symbolizer_open(const char *vmlinux, struct symbolizer *s)
{
	int n;

	*s = (struct symbolizer){};
	s->dwfl = dwfl_begin(&offline_callbacks);
	if (!s->dwfl)
		return -ENOMEM;
	s->mod = dwfl_report_offline(s->dwfl, "vmlinux", vmlinux, -1);
	if (!s->mod || dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		return -ENOEXEC;
	n = dwfl_module_getsymtab(s->mod);
	if (n <= 0)
		return -ENOEXEC;
	s->syms = calloc((size_t)n, sizeof(*s->syms));
	if (!s->syms)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(s->mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !*name)
			continue;
		s->syms[s->n_syms++] = (struct sym){ name, addr, sym.st_size };
	}
	qsort(s->syms, s->n_syms, sizeof(*s->syms), cmp_sym);
	return 0;
}

/* Start of the function of that name, preferring one of the given size
 * (static functions share names). */
static bool find_func(const struct symbolizer *s, const char *name, uint64_t size, GElf_Addr *ret)
{
	struct sym key = { .name = name };
	struct sym *hit = bsearch(&key, s->syms, s->n_syms, sizeof(*s->syms), cmp_sym);
	struct sym *first, *end;

	if (!hit)
		return false;
	for (first = hit; first > s->syms && streq(first[-1].name, name); first--)
		;
	for (end = hit; end < s->syms + s->n_syms && streq(end->name, name); end++)
		;
	*ret = first->addr;
	for (struct sym *p = first; p < end; p++)
		if (p->size == size) {
			*ret = p->addr;
			break;
		}
	return true;
}

struct loc {
	char *func; /* NULL for the outermost (keeps the text's name) */
	char *file;
	int line;
};

static char *relative_path(const char *file, const char *comp_dir)
{
	size_t n = comp_dir ? strlen(comp_dir) : 0;

	if (n > 0 && strncmp(file, comp_dir, n) == 0 && file[n] == '/')
		file += n + 1;
	while (startswith(file, "./"))
		file += 2;
	return strdup(file);
}

static const char *call_file(Dwarf_Die *cudie, Dwarf_Die *scope)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (!dwarf_attr(scope, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) != 0 ||
	    dwarf_getsrcfiles(cudie, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int call_line(Dwarf_Die *scope)
{
	Dwarf_Attribute attr;
	Dwarf_Word line;

	if (!dwarf_attr(scope, DW_AT_call_line, &attr) || dwarf_formudata(&attr, &line) != 0)
		return 0;
	return (int)line;
}

static void locs_free(struct loc *locs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(locs[i].func);
		free(locs[i].file);
	}
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
}

/* The innermost function scope in a scope list (from index from). */
static bool first_function(Dwarf_Die *scopes, int n, int from, Dwarf_Die *ret)
{
	for (int i = from; i < n; i++)
		if (is_function(&scopes[i])) {
			*ret = scopes[i];
			return true;
		}
	return false;
}

/* Innermost first: inlined frames, then the real function.  The caller of
 * an inlined copy is found among its physical parents (getscopes_die),
 * not its abstract origin's. */
static int locate(const struct symbolizer *s, GElf_Addr pc, struct loc *locs, size_t *ret_n)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cudie = dwfl_module_addrdie(s->mod, pc, &bias);
	Dwfl_Line *dl = dwfl_module_getsrc(s->mod, pc);
	Dwarf_Die *scopes = NULL, cur;
	Dwarf_Attribute attr;
	const char *file, *comp_dir = NULL;
	int line = 0, nscopes;
	bool have;
	size_t n = 0;

	*ret_n = 0;
	if (!dl || !(file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL)))
		return 0;
	if (cudie && dwarf_attr(cudie, DW_AT_comp_dir, &attr))
		comp_dir = dwarf_formstring(&attr);
	nscopes = cudie ? dwarf_getscopes(cudie, pc - bias, &scopes) : 0;
	have = nscopes > 0 && first_function(scopes, nscopes, 0, &cur);
	free(scopes);
	while (have && n < INLINE_DEPTH_MAX - 1 && dwarf_tag(&cur) == DW_TAG_inlined_subroutine) {
		const char *name = dwarf_diename(&cur);
		Dwarf_Die *chain = NULL;
		int nchain;

		locs[n++] = (struct loc){ .func = strdup(name ? name : "??"),
					  .file = relative_path(file ? file : "??", comp_dir), .line = line };
		file = call_file(cudie, &cur);
		line = call_line(&cur);
		nchain = dwarf_getscopes_die(&cur, &chain);
		have = nchain > 1 && first_function(chain, nchain, 1, &cur);
		free(chain);
	}
	locs[n++] = (struct loc){ .file = relative_path(file ? file : "??", comp_dir), .line = line };
	for (size_t i = 0; i < n; i++)
		if (!locs[i].file || (i + 1 < n && !locs[i].func)) {
			locs_free(locs, n);
			return -ENOMEM;
		}
	*ret_n = n;
	return 0;
}

static int symbolize_line(const struct symbolizer *s, struct buf *out, const char *l, size_t n)
{
	size_t ov[2 * RE_MAX_GROUPS];
	struct loc locs[INLINE_DEPTH_MAX];
	_cleanup_free_ char *fn = NULL;
	uint64_t off, size;
	GElf_Addr start;
	size_t nlocs;
	int r;

	if (re_search(frame_re, l, n, 0, ov) < 4)
		return buf_append(out, l, n);
	fn = strndup(l + ov[2], ov[3] - ov[2]);
	if (!fn)
		return -ENOMEM;
	off = strtoull(l + ov[4], NULL, 16);
	size = strtoull(l + ov[6], NULL, 16);
	if (!find_func(s, fn, size, &start))
		return buf_append(out, l, n);
	/* Return addresses point after the call; a RIP is the faulting
	 * instruction itself. */
	if (!startswith(l, "RIP:") && !startswith(l, "IP:") && off > 0)
		off--;
	r = locate(s, start + off, locs, &nlocs);
	if (r < 0)
		return r;
	if (nlocs == 0)
		return buf_append(out, l, n);
	for (size_t i = 0; i < nlocs && r >= 0; i++) {
		const char *name_start = l + ov[2], *frame_end = l + ov[7];

		if (i > 0)
			r = buf_puts(out, "\n");
		if (r >= 0 && locs[i].func)
			r = buf_printf(out, "%.*s%s %s:%d [inline]%.*s", (int)(name_start - l), l, locs[i].func,
				       locs[i].file, locs[i].line, (int)(n - (size_t)(frame_end - l)), frame_end);
		else if (r >= 0)
			r = buf_printf(out, "%.*s %s:%d%.*s", (int)(frame_end - l), l, locs[i].file, locs[i].line,
				       (int)(n - (size_t)(frame_end - l)), frame_end);
	}
	locs_free(locs, nlocs);
	return r;
}

int report_symbolize(const char *text, size_t len, const char *vmlinux, char **ret_text)
{
	struct symbolizer s;
	struct buf out = BUF_INIT(SYMBOLIZE_OUT_MAX);
	int r;

	if (len > REPORT_INPUT_MAX)
		return -E2BIG;
	r = symbolizer_open(vmlinux, &s);
	for (size_t pos = 0; r >= 0 && pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		/* Only bounded lines are symbolised; longer ones pass through. */
		r = n <= REPORT_LINE_MAX ? symbolize_line(&s, &out, text + pos, n) : buf_append(&out, text + pos, n);
		if (r >= 0 && nl)
			r = buf_append(&out, "\n", 1);
		pos += n + 1;
	}
	symbolizer_done(&s);
	if (r >= 0 && !out.data)
		r = buf_append(&out, "", 0);
	if (r < 0) {
		buf_free(&out);
		return r;
	}
	*ret_text = buf_steal(&out, NULL);
	return 0;
}
