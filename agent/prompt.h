/* Prompts are data files (agent/prompts/NAME.txt, installed under
 * PKGDATADIR/prompts), rendered with {{name}} placeholders.  The folder
 * is $KFIX_PROMPTS_DIR when set (tests), else the configured
 * [agent] prompts-dir, else the installed one. */
#ifndef KFIX_AGENT_PROMPT_H
#define KFIX_AGENT_PROMPT_H

#include <jansson.h>

#define PROMPT_FILE_MAX (256u * 1024)
#define PROMPT_MAX (2u * 1024 * 1024)

/* vars: an object of strings; a placeholder without a value is an error
 * (-ENOKEY), so a typo in a prompt file does not go unnoticed. */
int prompt_render(const char *dir, const char *name, const json_t *vars, char **ret);
const char *prompt_default_dir(void);

#endif
