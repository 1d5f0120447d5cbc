#!/bin/bash
# The repair agent end to end on the msg-uaf scenario:
# an injected use-after-free in ipc/msg.c (the cheat: an early return, rejected by the amputation gate).
# See repair-scenario.sh.
. "$(dirname "$0")/repair-scenario.sh"
kt_repair_scenario msg-uaf
