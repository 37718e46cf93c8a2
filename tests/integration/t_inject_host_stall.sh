#!/bin/sh
# One injected host_stall; see inject.sh.
SPEC=host_stall:ranks=3,steps=20-40,ms=50
. "$(dirname "$0")/inject.sh"
