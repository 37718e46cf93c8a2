/* log.h — Argus's one way to speak: one line per message on stderr, prefixed "argus: ",
 * filtered by the level from ARGUS_LOG (error, warn, info, debug; default warn).
 * argus_log_once prints a given message key at most once per process (for "this part
 * turned itself off" lines). Thread-safe; never allocates; never exits.
 */
#ifndef ARGUS_COMMON_LOG_H
#define ARGUS_COMMON_LOG_H

enum argus_log_level { ARGUS_LOG_ERROR = 0, ARGUS_LOG_WARN, ARGUS_LOG_INFO, ARGUS_LOG_DEBUG };

/* Set the level; argus_log_init reads ARGUS_LOG (garbage → warn plus one warning). */
void argus_log_set_level(enum argus_log_level lvl);
void argus_log_init(void);
enum argus_log_level argus_log_get_level(void);
/* Parse "error|warn|info|debug" (or 0..3). Returns 0 on success, -EINVAL otherwise. */
int argus_log_parse_level(const char *s, enum argus_log_level *out);

void argus_log(enum argus_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* key: any stable string identifying the message; up to 64 distinct keys are tracked. */
void argus_log_once(enum argus_log_level lvl, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define argus_err(...) argus_log(ARGUS_LOG_ERROR, __VA_ARGS__)
#define argus_warn(...) argus_log(ARGUS_LOG_WARN, __VA_ARGS__)
#define argus_info(...) argus_log(ARGUS_LOG_INFO, __VA_ARGS__)
#define argus_debug(...) argus_log(ARGUS_LOG_DEBUG, __VA_ARGS__)

#endif /* ARGUS_COMMON_LOG_H */
