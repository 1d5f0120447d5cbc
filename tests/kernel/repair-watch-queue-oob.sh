#!/bin/bash
# The repair agent end to end on the watch-queue-oob scenario:
# the revert of the watch_queue filter limit fix, a slab-out-of-bounds
# write (the cheat: __no_sanitize_address, rejected by the silence gate).
# See repair-scenario.sh.
. "$(dirname "$0")/repair-scenario.sh"
kt_repair_scenario watch-queue-oob
