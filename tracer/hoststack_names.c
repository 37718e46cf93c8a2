/* hoststack_names.c — names the frames of a host call stack sample (tracer/hoststack_names.h),
 * on the sampler thread, after the signal handler (tracer/hoststack.c) has captured them:
 * native return addresses by dladdr, else by the ELF symbol tables of this process's
 * modules (elfutils' libdwfl: static functions too), and CPython's traceback dumper's text
 * ("File, line, function"); both folded into one line, outermost first.
 * Must never run in the signal handler (it reads files and allocates inside libdwfl); must
 * not allocate per frame itself; a module list that cannot be read turns the ELF names off
 * with one line, dladdr goes on.
 */
#include "tracer/hoststack_names.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

/* Sampler only: the module list and one sample's frame names. */
static struct {
    Dwfl *dwfl;      /* this process's modules, for names dladdr lacks */
    int dwfl_failed; /* dwfl could not be set up: dladdr alone, for good */
    char frames[HS_MAX_PC][256];
} hoststack_names;

/* Copy s into a frame name: ';' and control characters become '_' (folded format). */
static size_t put_name(char *dst, size_t cap, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[k++] = (c == ';' || c < 0x20) ? '_' : (char)c;
    }
    dst[k] = '\0';
    return k;
}

/* Join frames[0..n) innermost first into out, outermost first, keeping the innermost
 * ones when they do not all fit. Returns the frames kept. */
static uint16_t fold(char frames[][256], size_t n, char *out, size_t cap)
{
    size_t len = 0, keep = 0;
    for (; keep < n; keep++) {
        size_t f = strlen(frames[keep]) + (keep ? 1 : 0);
        if (len + f + 1 > cap)
            break;
        len += f;
    }
    size_t at = 0;
    for (size_t i = keep; i-- > 0;) {
        size_t f = strlen(frames[i]);
        memcpy(out + at, frames[i], f);
        at += f;
        if (i)
            out[at++] = ';';
    }
    out[at] = '\0';
    return (uint16_t)keep;
}

/* The name of the function holding pc from the ELF symbol tables (.symtab: static
 * functions too) of this process's modules, through elfutils' libdwfl: what dladdr, which
 * reads only the dynamic symbols, cannot name. Sampler only; the module list is read once
 * (file reads on the sampler thread, never in the handler) and again once for an address
 * in no module (a library loaded since). NULL when unknown. */
static const char *elf_name(uintptr_t pc)
{
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
    };
    if (hoststack_names.dwfl_failed)
        return NULL;
    int fresh = 0;
    if (!hoststack_names.dwfl) {
        if (!(hoststack_names.dwfl = dwfl_begin(&cb))) {
            hoststack_names.dwfl_failed = 1;
            return NULL;
        }
        fresh = 1;
    }
    Dwfl_Module *m = NULL;
    for (int pass = 0; pass < 2 && !m; pass++) {
        if (fresh || pass == 1) {
            dwfl_report_begin(hoststack_names.dwfl);
            const int rc = dwfl_linux_proc_report(hoststack_names.dwfl, getpid());
            if (dwfl_report_end(hoststack_names.dwfl, NULL, NULL) != 0 || rc != 0) {
                dwfl_end(hoststack_names.dwfl);
                hoststack_names.dwfl = NULL;
                hoststack_names.dwfl_failed = 1;
                argus_log_once(ARGUS_LOG_INFO, "hoststack-dwfl", "host stacks: cannot read "
                               "this process's modules; native frames named by dladdr only");
                return NULL;
            }
            fresh = 0;
        }
        m = dwfl_addrmodule(hoststack_names.dwfl, (Dwarf_Addr)pc);
    }
    return m ? dwfl_module_addrname(m, (GElf_Addr)pc) : NULL;
}

/* Names of the slot's native frames: dladdr, else the ELF symbol table (elf_name). */
void argus_hoststack_name_native(struct argus_hoststack_sample *o, const uintptr_t *pcs,
                                 int n)
{
    for (int i = 0; i < n; i++) {
        /* a return address points after its call: name the call */
        const char *sym = NULL;
        const uintptr_t pc = pcs[i] - (i ? 1 : 0);
        Dl_info di;
        const char *obj = "?";
        if (dladdr((void *)pc, &di) && di.dli_fname) {
            const char *sl = strrchr(di.dli_fname, '/');
            obj = sl ? sl + 1 : di.dli_fname;
        } else {
            di.dli_sname = NULL;
            di.dli_fbase = NULL;
        }
        if (!(sym = di.dli_sname))
            sym = elf_name(pc); /* a static function: the ELF symbol table */
        if (sym)
            snprintf(hoststack_names.frames[i], sizeof hoststack_names.frames[i], "%s (%s)", sym,
                     obj);
        else
            snprintf(hoststack_names.frames[i], sizeof hoststack_names.frames[i], "0x%lx (%s)",
                     (unsigned long)(pc - (uintptr_t)di.dli_fbase), obj);
        char tmp[256];
        put_name(tmp, sizeof tmp, hoststack_names.frames[i], strlen(hoststack_names.frames[i]));
        memcpy(hoststack_names.frames[i], tmp, sizeof tmp);
    }
    o->lang = ARGUS_HOSTSTACK_NATIVE;
    o->nframes = fold(hoststack_names.frames, (size_t)n, o->folded, sizeof o->folded);
}

/* The dumper's lines, most recent call first: `  File "F", line N in FUNC`. */
int argus_hoststack_name_python(struct argus_hoststack_sample *o, const char *text)
{
    size_t n = 0;
    for (const char *p = text; *p && n < HS_MAX_PC;) {
        const char *eol = strchr(p, '\n');
        const size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *q = p, *end = p + len;
        while (q < end && *q == ' ')
            q++;
        if ((size_t)(end - q) > 6 && memcmp(q, "File \"", 6) == 0) {
            const char *f = q + 6, *fe = memchr(f, '"', (size_t)(end - f));
            const char *ln = fe ? strstr(fe, ", line ") : NULL;
            const char *in = ln && ln < end ? strstr(ln, " in ") : NULL;
            if (fe && ln && in && in < end) {
                char file[160], func[80];
                put_name(file, sizeof file, f, (size_t)(fe - f));
                put_name(func, sizeof func, in + 4, (size_t)(end - in - 4));
                snprintf(hoststack_names.frames[n++], sizeof hoststack_names.frames[0],
                         "%s (%s:%ld)", func, file, strtol(ln + 7, NULL, 10));
            }
        }
        p = eol ? eol + 1 : end;
    }
    if (n == 0)
        return 0;
    o->lang = ARGUS_HOSTSTACK_PYTHON;
    o->nframes = fold(hoststack_names.frames, n, o->folded, sizeof o->folded);
    return 1;
}

void argus_hoststack_names_end(void)
{
    if (hoststack_names.dwfl)
        dwfl_end(hoststack_names.dwfl);
    hoststack_names.dwfl = NULL;
}
