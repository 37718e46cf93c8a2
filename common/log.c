/* log.c — one-line messages prefixed "argus: " on stderr, level from ARGUS_LOG, and
 * at-most-once messages. The level and the once-table are this module's own state. */
#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define ONCE_MAX 64
#define ONCE_KEY 48

static int log_level = ARGUS_LOG_WARN; /* read from any thread: atomic accesses only */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char once_keys[ONCE_MAX][ONCE_KEY];
static int once_n;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void argus_log_set_level(enum argus_log_level lvl)
{
    if (lvl >= ARGUS_LOG_ERROR && lvl <= ARGUS_LOG_DEBUG)
        __atomic_store_n(&log_level, (int)lvl, __ATOMIC_RELAXED);
}

enum argus_log_level argus_log_get_level(void)
{
    return (enum argus_log_level)__atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int argus_log_parse_level(const char *s, enum argus_log_level *out)
{
    if (!s || !*s)
        return -EINVAL;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, level_names[i]) == 0 || (s[0] == '0' + i && s[1] == '\0')) {
            *out = (enum argus_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = ARGUS_LOG_WARN;
        return 0;
    }
    return -EINVAL;
}

void argus_log_init(void)
{
    const char *s = getenv("ARGUS_LOG");
    enum argus_log_level lvl;

    if (!s || !*s)
        return;
    if (argus_log_parse_level(s, &lvl) == 0) {
        argus_log_set_level(lvl);
    } else {
        /* Garbage means warn (log.h), whatever the level was before. */
        argus_log_set_level(ARGUS_LOG_WARN);
        argus_log(ARGUS_LOG_WARN,
                  "ARGUS_LOG=%.64s: not one of error, warn, info, debug; using warn", s);
    }
}

/* Format "argus: <msg>\n" into one buffer and write it with one write(2), so lines from
 * several ranks or threads do not interleave. */
static void log_emit(enum argus_log_level lvl, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "argus: %s", lvl == ARGUS_LOG_ERROR ? "error: " : "");

    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (m < 0)
        return;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void argus_log(enum argus_log_level lvl, const char *fmt, ...)
{
    va_list ap;

    if (lvl > argus_log_get_level())
        return;
    va_start(ap, fmt);
    log_emit(lvl, fmt, ap);
    va_end(ap);
}

void argus_log_once(enum argus_log_level lvl, const char *key, const char *fmt, ...)
{
    va_list ap;
    int seen = 0;

    if (lvl > argus_log_get_level())
        return;
    pthread_mutex_lock(&log_lock);
    for (int i = 0; i < once_n; i++) {
        if (strncmp(once_keys[i], key, ONCE_KEY - 1) == 0) {
            seen = 1;
            break;
        }
    }
    if (!seen && once_n < ONCE_MAX) {
        snprintf(once_keys[once_n], ONCE_KEY, "%s", key);
        once_n++;
    }
    pthread_mutex_unlock(&log_lock);
    if (seen)
        return;
    va_start(ap, fmt);
    log_emit(lvl, fmt, ap);
    va_end(ap);
}
