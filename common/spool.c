/* spool.c — placeholder while being written. */
#include "common/spool.h"
