#!/bin/bash
# The repair agent end to end on the timer-kclock scenario: do_timer_create()
# no longer sets the timer's k_clock, and timer_gettime() warns in
# do_timer_gettime() (the cheat: the warning taken away, rejected by the
# silence gate).  The fix is in no function of the crash stack: the
# scripted model finds it with the tools.  See repair-scenario.sh.
. "$(dirname "$0")/repair-scenario.sh"
kt_repair_scenario timer-kclock
