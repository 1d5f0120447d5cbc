/* Struct layouts from a vmlinux's DWARF (elfutils libdw), printed like
 * pahole: each member's offset and size, bit-fields with their bit
 * position, anonymous structs and unions expanded in place, holes
 * named.  The first complete definition of the name wins: a kernel
 * defines each struct tag once. */
#include "config.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/strutil.h"
#include "vmlinux.h"

#define TYPE_DEPTH_MAX 8
#define NEST_MAX 4

static void type_name(Dwarf_Die *die, char *out, size_t n, int depth);

/* The name of the type die refers to, between prefix and suffix. */
static void referenced(Dwarf_Die *die, char *out, size_t n, int depth, const char *prefix,
		       const char *suffix)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	char inner[256];

	if (dwarf_attr(die, DW_AT_type, &a) && dwarf_formref_die(&a, &t))
		type_name(&t, inner, sizeof(inner), depth + 1);
	else
		snprintf(inner, sizeof(inner), "void");
	snprintf(out, n, "%s%s%s", prefix, inner, suffix);
}

static void type_name(Dwarf_Die *die, char *out, size_t n, int depth)
{
	const char *name = dwarf_diename(die);
	Dwarf_Word count = 0;
	Dwarf_Die sub;

	if (depth > TYPE_DEPTH_MAX) {
		snprintf(out, n, "...");
		return;
	}
	switch (dwarf_tag(die)) {
	case DW_TAG_structure_type:
		snprintf(out, n, "struct %s", name ?: "{...}");
		return;
	case DW_TAG_union_type:
		snprintf(out, n, "union %s", name ?: "{...}");
		return;
	case DW_TAG_enumeration_type:
		snprintf(out, n, "enum %s", name ?: "{...}");
		return;
	case DW_TAG_pointer_type:
		referenced(die, out, n, depth, "", " *");
		/* "char * *" reads "char **" */
		for (char *p; (p = strstr(out, "* *"));)
			memmove(p + 1, p + 2, strlen(p + 2) + 1);
		return;
	case DW_TAG_const_type:
		referenced(die, out, n, depth, "const ", "");
		return;
	case DW_TAG_volatile_type:
		referenced(die, out, n, depth, "volatile ", "");
		return;
	case DW_TAG_subroutine_type:
		snprintf(out, n, "function");
		return;
	case DW_TAG_array_type:
		if (dwarf_child(die, &sub) == 0) {
			Dwarf_Attribute a;

			if (dwarf_attr(&sub, DW_AT_count, &a))
				(void)dwarf_formudata(&a, &count);
			else if (dwarf_attr(&sub, DW_AT_upper_bound, &a) &&
				 dwarf_formudata(&a, &count) == 0)
				count++;
		}
		{
			char dim[32];

			snprintf(dim, sizeof(dim), "[%" PRIu64 "]", (uint64_t)count);
			referenced(die, out, n, depth, "", dim);
		}
		return;
	default:
		snprintf(out, n, "%s", name ?: "?");
	}
}

static void type_name_of(Dwarf_Die *member, char *out, size_t n)
{
	referenced(member, out, n, 0, "", "");
}

static uint64_t type_size(Dwarf_Die *member)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	Dwarf_Word size = 0;

	if (dwarf_attr(member, DW_AT_type, &a) && dwarf_formref_die(&a, &t) &&
	    dwarf_aggregate_size(&t, &size) == 0)
		return size;
	return 0;
}

static uint64_t udata(Dwarf_Die *die, unsigned at, uint64_t dflt)
{
	Dwarf_Attribute a;
	Dwarf_Word v;

	return dwarf_attr(die, at, &a) && dwarf_formudata(&a, &v) == 0 ? v : dflt;
}

/* A member's position in bits from the start of its struct.  DWARF 4
 * bit-fields give the storage unit's offset and the field's bit offset
 * from its most significant bit (little-endian here); DWARF 5 gives the
 * position directly. */
static uint64_t bit_position(Dwarf_Die *m, uint64_t bits)
{
	uint64_t byte = udata(m, DW_AT_data_member_location, 0);
	Dwarf_Attribute a;

	if (dwarf_attr(m, DW_AT_data_bit_offset, &a))
		return udata(m, DW_AT_data_bit_offset, 0);
	if (bits && dwarf_attr(m, DW_AT_bit_offset, &a)) {
		uint64_t unit = udata(m, DW_AT_byte_size, type_size(m)) * 8;

		return byte * 8 + unit - udata(m, DW_AT_bit_offset, 0) - bits;
	}
	return byte * 8;
}

/* "T name;" as C writes it: array bounds after the name, no blank after
 * a '*'. */
static void declaration(struct buf *b, const char *type, const char *name)
{
	const char *dims = strchr(type, '[');
	size_t n = dims ? (size_t)(dims - type) : strlen(type);

	(void)buf_printf(b, "%.*s%s%s%s;\n", (int)n, type, n && type[n - 1] == '*' ? "" : " ", name,
			 dims ?: "");
}

static bool anonymous_aggregate(Dwarf_Die *m, Dwarf_Die *ret)
{
	Dwarf_Attribute a;
	int tag;

	if (dwarf_diename(m) || !dwarf_attr(m, DW_AT_type, &a) || !dwarf_formref_die(&a, ret))
		return false;
	tag = dwarf_tag(ret);
	return (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) && !dwarf_diename(ret);
}

static void members(struct buf *b, Dwarf_Die *agg, uint64_t base, int nest, bool is_union)
{
	Dwarf_Die m, inner;
	uint64_t end = 0;

	if (dwarf_child(agg, &m) != 0)
		return;
	do {
		uint64_t bits, pos, size;
		char type[256];

		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		bits = udata(&m, DW_AT_bit_size, 0);
		pos = base * 8 + bit_position(&m, bits);
		size = type_size(&m);
		if (!is_union && !bits && pos / 8 > end && end > 0)
			(void)buf_printf(b, "%*s/* hole: %" PRIu64 " bytes */\n", 2 * nest + 16, "",
					 pos / 8 - end);
		if (nest < NEST_MAX && anonymous_aggregate(&m, &inner)) {
			bool u = dwarf_tag(&inner) == DW_TAG_union_type;

			(void)buf_printf(b, "%6" PRIu64 " %6" PRIu64 "   %*s%s {\n", pos / 8, size,
					 2 * nest, "", u ? "union" : "struct");
			members(b, &inner, pos / 8, nest + 1, u);
			(void)buf_printf(b, "%16s%*s};\n", "", 2 * nest, "");
		} else {
			type_name_of(&m, type, sizeof(type));
			if (bits)
				(void)buf_printf(b, "%6" PRIu64 ":%-2" PRIu64 " %3" PRIu64 "b  %*s%s %s:%" PRIu64
						 ";\n", pos / 8, pos % 8, bits, 2 * nest, "", type,
						 dwarf_diename(&m) ?: "", bits);
			else
				(void)buf_printf(b, "%6" PRIu64 " %6" PRIu64 "   %*s", pos / 8, size,
						 2 * nest, "");
			if (!bits)
				declaration(b, type, dwarf_diename(&m) ?: "");
		}
		if ((pos + (bits ? bits : size * 8) + 7) / 8 > end)
			end = (pos + (bits ? bits : size * 8) + 7) / 8;
	} while (dwarf_siblingof(&m, &m) == 0);
}

static bool find_type(Dwarf *dw, const char *name, int want_tag, Dwarf_Die *ret)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0)
			do {
				int tag = dwarf_tag(&d);

				if ((tag == want_tag || (want_tag == 0 && (tag == DW_TAG_structure_type ||
									   tag == DW_TAG_union_type))) &&
				    streq_ptr(dwarf_diename(&d), name) &&
				    !dwarf_hasattr(&d, DW_AT_declaration)) {
					*ret = d;
					return true;
				}
			} while (dwarf_siblingof(&d, &d) == 0);
		off = next;
	}
	return false;
}

int vmlinux_struct_layout(const char *vmlinux, const char *name, size_t max, char **ret)
{
	struct buf b = BUF_INIT(max);
	int fd, tag = 0;
	Dwarf *dw;
	Dwarf_Die die;
	Dwarf_Word size = 0;

	if (startswith(name, "struct ")) {
		name += 7;
		tag = DW_TAG_structure_type;
	} else if (startswith(name, "union ")) {
		name += 6;
		tag = DW_TAG_union_type;
	}
	fd = open(vmlinux, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		return -ENOEXEC;
	}
	if (!find_type(dw, name, tag, &die)) {
		dwarf_end(dw);
		close(fd);
		return -ENOENT;
	}
	(void)dwarf_aggregate_size(&die, &size);
	tag = dwarf_tag(&die);
	(void)buf_printf(&b, "%s %s {\t/* size %" PRIu64 " */\n/* offset  size */\n",
			 tag == DW_TAG_union_type ? "union" : "struct", name, (uint64_t)size);
	members(&b, &die, 0, 1, tag == DW_TAG_union_type);
	(void)buf_printf(&b, "};\t/* size %" PRIu64 " */\n", (uint64_t)size);
	dwarf_end(dw);
	close(fd);
	*ret = buf_steal(&b, NULL);
	return *ret ? 0 : -ENOMEM;
}
