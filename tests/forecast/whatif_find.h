/* whatif_find.h — for the forecast's what-if tests (test_whatif.c, test_whatif_mb.c): the
 * what-if of a forecast by its name, a cmocka failure when it is missing. Test-only;
 * include after tests/common/testgen.h (cmocka) and forecast/forecast.h. */
#ifndef ARGUS_TESTS_FORECAST_WHATIF_FIND_H
#define ARGUS_TESTS_FORECAST_WHATIF_FIND_H

#include <string.h>

static const struct argus_fc_whatif *find(const struct argus_forecast *fc, const char *name)
{
    for (size_t w = 0; w < fc->n_whatif; w++)
        if (strcmp(fc->whatif[w].name, name) == 0)
            return &fc->whatif[w];
    fail_msg("what-if %s missing", name);
    return NULL;
}

#endif
