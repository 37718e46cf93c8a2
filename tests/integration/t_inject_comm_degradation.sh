#!/bin/sh
# One injected comm_degradation; see inject.sh.
SPEC=comm_degradation:ranks=1,steps=20-40,factor=3
. "$(dirname "$0")/inject.sh"
