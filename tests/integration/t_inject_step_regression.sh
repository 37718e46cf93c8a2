#!/bin/sh
# One injected step_regression; see inject.sh.
SPEC=step_regression:steps=30-,factor=1.15
. "$(dirname "$0")/inject.sh"
