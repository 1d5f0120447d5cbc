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
#include "common/proc.h"
#include "report-internal.h"
#include "vmlinux.h"

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
	char *srctree;	/* the sources' folder when the build named them absolutely */
};

static void symbolizer_done(struct symbolizer *s)
{
	free(s->syms);
	free(s->srctree);
	if (s->dwfl)
		dwfl_end(s->dwfl);
}

static int cmp_sym(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

static char *find_srctree(Dwfl_Module *mod);

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
	s->srctree = find_srctree(s->mod);
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

/* Kernels built with O= name their sources by absolute path: the source
 * tree is where init/main.c, which every kernel has, lives. */
static char *find_srctree(Dwfl_Module *mod)
{
	static const char anchor[] = "/init/main.c";
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		const char *name;

		if (dwarf_offdie(dw, off + hsize, &cu) && (name = dwarf_diename(&cu)) &&
		    name[0] == '/' && endswith(name, anchor))
			return strndup(name, strlen(name) - strlen(anchor));
		off = next;
	}
	return NULL;
}

static char *relative_path(const char *file, const char *comp_dir, const char *srctree)
{
	size_t n = comp_dir ? strlen(comp_dir) : 0, t = srctree ? strlen(srctree) : 0;

	if (n > 0 && strncmp(file, comp_dir, n) == 0 && file[n] == '/')
		file += n + 1;
	else if (t > 0 && strncmp(file, srctree, t) == 0 && file[t] == '/')
		file += t + 1;
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
					  .file = relative_path(file ? file : "??", comp_dir, s->srctree), .line = line };
		file = call_file(cudie, &cur);
		line = call_line(&cur);
		nchain = dwarf_getscopes_die(&cur, &chain);
		have = nchain > 1 && first_function(chain, nchain, 1, &cur);
		free(chain);
	}
	locs[n++] = (struct loc){ .file = relative_path(file ? file : "??", comp_dir, s->srctree), .line = line };
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

/* A frame that carries its source line, as report_symbolize (and
 * syzbot's own symboliser) writes it: "func+0x1/0x2 dir/file.c:12" or
 * "func dir/file.c:12 [inline]". */
static const char located_re[] =
	"(?:\\+0x[0-9a-f]+/0x[0-9a-f]+ [a-zA-Z0-9_./+-]+\\.[a-zA-Z]+:[0-9]+"
	"|[a-zA-Z0-9_.] [a-zA-Z0-9_./+-]+\\.[a-zA-Z]+:[0-9]+ \\[inline\\])\\s*$";

bool report_symbolised(const char *text, size_t len)
{
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (n <= REPORT_LINE_MAX && re_match(located_re, text + pos, n))
			return true;
		pos += n + 1;
	}
	return false;
}

/* --- one address, one function: the agent's symbolize and disassemble ---- */

int vmlinux_symbolize(const char *vmlinux, uint64_t addr, size_t max, char **ret)
{
	struct symbolizer s;
	struct buf out = BUF_INIT(max);
	struct loc locs[INLINE_DEPTH_MAX];
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *name;
	size_t n = 0;
	int r;

	r = symbolizer_open(vmlinux, &s);
	if (r < 0) {
		symbolizer_done(&s);
		return r;
	}
	name = dwfl_module_addrinfo(s.mod, addr, &off, &sym, NULL, NULL, NULL);
	if (!name) {
		symbolizer_done(&s);
		return -ENOENT;
	}
	r = locate(&s, addr, locs, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (locs[i].func)
			(void)buf_printf(&out, "%s %s:%d [inline]\n", locs[i].func, locs[i].file,
					 locs[i].line);
		else
			(void)buf_printf(&out, "%s+0x%" PRIx64 "/0x%" PRIx64 " %s:%d\n", name,
					 (uint64_t)off, (uint64_t)sym.st_size, locs[i].file, locs[i].line);
	}
	if (r >= 0 && n == 0)
		(void)buf_printf(&out, "%s+0x%" PRIx64 "/0x%" PRIx64 " (no line information)\n",
				 name, (uint64_t)off, (uint64_t)sym.st_size);
	locs_free(locs, n);
	symbolizer_done(&s);
	if (r < 0 || !out.data) {
		buf_free(&out);
		return r < 0 ? r : -ENOMEM;
	}
	*ret = buf_steal(&out, NULL);
	return 0;
}

static bool func_range(const struct symbolizer *s, const char *name, GElf_Addr *ret_start,
		       GElf_Xword *ret_size)
{
	struct sym key = { .name = name };
	struct sym *hit = bsearch(&key, s->syms, s->n_syms, sizeof(*s->syms), cmp_sym);

	for (; hit && hit > s->syms && streq(hit[-1].name, name); hit--)
		;
	if (!hit || hit->size == 0)
		return false;
	*ret_start = hit->addr;
	*ret_size = hit->size;
	return true;
}

int vmlinux_disassemble(const char *vmlinux, const char *name, size_t max, char **ret)
{
	struct symbolizer s;
	struct proc_opts po = PROC_OPTS_DEFAULT;
	struct proc_result pr = {};
	char from[64], to[64];
	GElf_Addr start;
	GElf_Xword size;
	int r;

	r = symbolizer_open(vmlinux, &s);
	if (r >= 0 && !func_range(&s, name, &start, &size))
		r = -ENOENT;
	symbolizer_done(&s);
	if (r < 0)
		return r;
	snprintf(from, sizeof(from), "--start-address=0x%" PRIx64, (uint64_t)start);
	snprintf(to, sizeof(to), "--stop-address=0x%" PRIx64, (uint64_t)(start + size));
	{
		/* the arguments are ours; the file was checked to be an ELF */
		char *const argv[] = { "objdump", "-d", "--no-show-raw-insn", "-w", from, to,
				       (char *)vmlinux, NULL };

		po.timeout_usec = 60 * 1000000ull;
		po.output_max = max;
		po.discard_stderr = true;
		r = proc_run(argv, &po, &pr);
	}
	if (r >= 0 && pr.exit_code != 0)
		r = -EIO;
	if (r >= 0) {
		/* from the function's label on: the header is objdump's */
		const char *p = strstr(pr.output ?: "", ">:\n");
		const char *line = p ? p : pr.output ?: "";

		while (p && line > pr.output && line[-1] != '\n')
			line--;
		*ret = strdup(line);
		if (!*ret)
			r = -ENOMEM;
	}
	proc_result_free(&pr);
	return r;
}
