/* hoststack_names.h — internal to tracer/: naming the frames of one host call stack sample
 * (tracer/hoststack.h) once the signal handler has captured them. Sampler thread only (one
 * caller at a time: the watcher, or a test while no watcher runs), never the handler:
 * naming reads /proc and ELF files (libdwfl) and allocates there. A frame name has ';'
 * and control characters replaced by '_' (the folded format); the innermost frames are
 * kept when they do not all fit in the sample's text.
 */
#ifndef ARGUS_TRACER_HOSTSTACK_NAMES_H
#define ARGUS_TRACER_HOSTSTACK_NAMES_H

#include <stdint.h>

#include "tracer/hoststack.h"

#define HS_MAX_PC 128 /* native frames a sample keeps */

/* o's folded text, nframes and lang (ARGUS_HOSTSTACK_NATIVE) from the native return
 * addresses pcs[0..n) (n <= HS_MAX_PC), innermost first: "symbol (object)" by dladdr, else
 * by the ELF symbol tables ("0xOFFSET (object)" when neither names it). The module list
 * is read at the first call and again once for an address in no module. */
void argus_hoststack_name_native(struct argus_hoststack_sample *o, const uintptr_t *pcs,
                                 int n);
/* o's folded text, nframes and lang (ARGUS_HOSTSTACK_PYTHON) from the text CPython's
 * traceback dumper wrote (most recent call first): "function (file:line)" per frame. 1, or
 * 0 (o untouched) when the text holds no frame. */
int argus_hoststack_name_python(struct argus_hoststack_sample *o, const char *text);
/* Release the module list (once the sampler has ended; a later call reads it again). */
void argus_hoststack_names_end(void);

#endif /* ARGUS_TRACER_HOSTSTACK_NAMES_H */
