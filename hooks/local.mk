# hooks module
HOOKS_LIBS =
