#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "run.h"

/* The crash parser decides, so that a title here is the title syzbot
 * would give the same console. */
int run_classify_console(const char *console, size_t len, char **ret_title, char **ret_report)
{
	_cleanup_(report_freep) struct report *rep = NULL;
	_cleanup_free_ char *title = NULL, *text = NULL;
	int r;

	r = report_parse(console, len, &rep);
	if (r < 0)
		return r;
	if (!report_title(rep))
		return -ENOENT;
	title = strdup(report_title(rep));
	text = strdup(report_text(rep) ? report_text(rep) : "");
	if (!title || !text)
		return -ENOMEM;
	*ret_title = TAKE_PTR(title);
	*ret_report = TAKE_PTR(text);
	return 0;
}
