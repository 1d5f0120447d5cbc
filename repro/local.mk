# repro module: crash reports, trees, builds, VMs, runs.
# Modules define NAME_LIBS for linking; tests register themselves here.
REPRO_LIBS =
