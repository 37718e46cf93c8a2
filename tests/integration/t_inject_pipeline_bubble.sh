#!/bin/sh
# One injected pipeline_bubble; see inject.sh.
SPEC=pipeline_bubble:stage=1,steps=20-40,factor=1.5
. "$(dirname "$0")/inject.sh"
