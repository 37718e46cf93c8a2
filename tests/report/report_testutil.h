/* report_testutil.h — tests only: what the report writers' cmocka units share
 * (tests/report/test_report.c, test_placement_report.c): reading a written file back and
 * emptying an output directory. Failures inside are cmocka assertions (the test stops).
 */
#ifndef ARGUS_TESTS_REPORT_TESTUTIL_H
#define ARGUS_TESTS_REPORT_TESTUTIL_H

#include <stddef.h>

/* The bytes of path, NUL-terminated, in a malloc'd buffer the caller frees; *len (when
 * len is not NULL) their count. NULL when path cannot be opened. */
char *rt_slurp(const char *path, size_t *len);
/* Unlink every entry of dir whose name does not start with '.' (one level; dir stays). */
void rt_empty_dir(const char *dir);

#endif /* ARGUS_TESTS_REPORT_TESTUTIL_H */
