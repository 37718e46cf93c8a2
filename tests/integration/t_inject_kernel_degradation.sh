#!/bin/sh
# One injected kernel_degradation; see inject.sh.
SPEC=kernel_degradation:ranks=6,kernel=flash_bwd,steps=20-40,factor=2
. "$(dirname "$0")/inject.sh"
