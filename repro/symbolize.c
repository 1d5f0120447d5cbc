/* Symbolisation of report frames with libdw (placeholder until the DWARF
 * walker lands). */
#include "config.h"

#include <errno.h>

#include "report.h"

int report_symbolize(const char *text, size_t len, const char *vmlinux, char **ret_text)
{
	return -EOPNOTSUPP;
}
