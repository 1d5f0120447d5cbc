#!/bin/bash
# The repair agent end to end on the clock-null-deref scenario:
# clock_gettime() without its check of the clock, a NULL dereference
# (the cheat: a Kconfig change, rejected by the scope gate).
# See repair-scenario.sh.
. "$(dirname "$0")/repair-scenario.sh"
kt_repair_scenario clock-null-deref
