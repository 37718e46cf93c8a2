#!/bin/sh
# One injected compute_straggler; see inject.sh.
SPEC=compute_straggler:ranks=5,steps=20-40,factor=1.5
. "$(dirname "$0")/inject.sh"
