/* What a built kernel's vmlinux tells about itself, for the agent's
 * tools: a struct's layout (from its DWARF, like pahole), the function
 * and source line of an address (inlined frames included), a function's
 * machine code.  Every answer is text, bounded by max bytes. */
#ifndef KFIX_REPRO_VMLINUX_H
#define KFIX_REPRO_VMLINUX_H

#include <stddef.h>
#include <stdint.h>

/* Members of struct (or union) name with their offsets and sizes.
 * -ENOENT when vmlinux defines no such type, -ENOEXEC when it has no
 * DWARF. */
int vmlinux_struct_layout(const char *vmlinux, const char *name, size_t max, char **ret);

/* "func+0xOFF/0xSIZE file:line" for addr, inlined frames first. */
int vmlinux_symbolize(const char *vmlinux, uint64_t addr, size_t max, char **ret);

/* objdump's disassembly of function name (the first of that name). */
int vmlinux_disassemble(const char *vmlinux, const char *name, size_t max, char **ret);

#endif
