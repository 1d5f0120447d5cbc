#!/bin/bash
# The repair agent end to end on the watch-queue-leak scenario: the revert
# of upstream b490207017ba, a memory leak only kmemleak sees (every run,
# the base's too, scans after the reproducer); the fix is where the queue
# is dismantled, on no stack of the report (the cheat: kmemleak_not_leak,
# rejected by the silence gate).  See repair-scenario.sh.
. "$(dirname "$0")/repair-scenario.sh"
kt_repair_scenario watch-queue-leak
