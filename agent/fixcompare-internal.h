/* Private to agent/fixcompare*.c. */
#ifndef KFIX_AGENT_FIXCOMPARE_INTERNAL_H
#define KFIX_AGENT_FIXCOMPARE_INTERNAL_H

#include "fixcompare.h"
#include "udiff-internal.h"

#define FIXCOMPARE_CANON_MAX (16u * 1024 * 1024)

/* The change d makes, as one token per line ("-word", "+$1", a line
 * "@path" before each file's), up to layout and the fix's own names; see
 * fixcompare-equiv.c.  known[i] is the text that tells names d->files[i]
 * already had from names the fix brings (NULL: none). */
int fixcompare_canon(const struct udiff *d, char *const *known, char **ret);

#endif
