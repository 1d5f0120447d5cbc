# repro module
REPRO_LIBS =
