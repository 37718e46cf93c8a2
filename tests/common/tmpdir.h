/* tmpdir.h — the unit tests' scratch directories: a new directory
 * $TMPDIR/argus-test-<tag>-XXXXXX (/tmp when TMPDIR is unset or empty), made by mkdtemp
 * (mode 0700, a name nobody else can take). Test-only code, included where needed. */
#ifndef ARGUS_TESTS_COMMON_TMPDIR_H
#define ARGUS_TESTS_COMMON_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* Makes the directory into buf[0..n); buf, or NULL (too long, or mkdtemp failed). */
static inline char *argus_test_tmpdir(char *buf, size_t n, const char *tag)
{
    const char *t = getenv("TMPDIR");
    const int k = snprintf(buf, n, "%s/argus-test-%s-XXXXXX", t && *t ? t : "/tmp", tag);
    if (k < 0 || (size_t)k >= n)
        return NULL;
    return mkdtemp(buf);
}

#endif /* ARGUS_TESTS_COMMON_TMPDIR_H */
