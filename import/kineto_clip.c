/* kineto_clip.c — the Kineto importer's input filter (import/import_int.h): between gzread
 * and YAJL, in place, it drops a UTF-8 byte order mark at the start of the document, the
 * bytes of a JSON string past KT_STR_MAX and of a bare token (number, literal) past
 * KT_TOK_MAX. YAJL re-scans a token that spans its input buffers from the token's start on
 * every buffer, so one 50 MB string cost seconds and grew quadratically; clipped, every
 * token is short and the parse stays linear in the input. A cut is made only between whole
 * characters (never inside an escape or a UTF-8 sequence), so what YAJL sees stays valid
 * JSON when the input was; the end of a clipped string is still found through its escapes.
 * Each clipped string or token is counted. Knows nothing of Kineto; no allocation.
 */
#include "import/import_int.h"

#include <string.h>

/* The state between buffers lives in struct kt_clip (import/import_int.h). */
enum { CL_OUT = 0, CL_STR, CL_TOK };

static int structural(unsigned char c)
{
    return c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',' ||
           c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"';
}

/* One byte dropped before output position o. */
static void drop(struct kt_clip *k, size_t o)
{
    if (k->n_marks == 0 || k->mark_out[k->n_marks - 1] != o) {
        if (k->n_marks < KT_CLIP_MARKS)
            k->mark_out[k->n_marks++] = o;
        /* past the last mark the drops count at it: offsets after it come out early */
    }
    k->dropped++;
    k->mark_drop[k->n_marks - 1] = k->dropped;
}

size_t kt_clip(struct kt_clip *k, unsigned char *buf, size_t n)
{
    size_t o = 0, i = 0;

    k->n_marks = 0;
    k->chunk_drop0 = k->dropped;
    if (!k->started && n > 0) {
        /* gzread fills its buffer unless the input ends: the mark is in the first read */
        k->started = 1;
        if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf) {
            for (; i < 3; i++)
                drop(k, 0);
            k->bom_seen = 1;
        }
    }
    for (; i < n; i++) {
        const unsigned char c = buf[i];
        int keep = 1;
        switch (k->state) {
        case CL_OUT:
            if (c == '"')
                k->state = CL_STR, k->len = 0, k->esc = 0, k->cut = 0;
            else if (!structural(c))
                k->state = CL_TOK, k->len = 1, k->cut = 0;
            break;
        case CL_TOK:
            if (structural(c)) {
                k->state = CL_OUT;
                if (c == '"')
                    k->state = CL_STR, k->len = 0, k->esc = 0, k->cut = 0;
            } else if (k->cut || ++k->len > KT_TOK_MAX) {
                if (!k->cut)
                    k->cut = 1, k->clipped++;
                keep = 0;
            }
            break;
        case CL_STR:
            if (k->cut) { /* dropping to the closing quote, through escapes */
                keep = 0;
                if (k->esc)
                    k->esc = 0;
                else if (c == '\\')
                    k->esc = 1;
                else if (c == '"')
                    keep = 1, k->state = CL_OUT;
                break;
            }
            if (k->esc == 1) {
                k->esc = c == 'u' ? 5 : 0; /* \uXXXX: four hex digits follow */
            } else if (k->esc > 1) {
                k->esc = k->esc == 2 ? 0 : k->esc - 1;
            } else if (c == '"') {
                k->state = CL_OUT;
            } else if (k->len >= KT_STR_MAX && (c & 0xc0) != 0x80) {
                k->cut = 1, k->clipped++, keep = 0; /* at a whole character */
                k->esc = c == '\\';
            } else if (c == '\\') {
                k->esc = 1;
            }
            k->len += keep;
            break;
        }
        if (keep)
            buf[o++] = c;
        else
            drop(k, o);
    }
    return o;
}

uint64_t kt_clip_offset(const struct kt_clip *k, uint64_t in_start, size_t at)
{
    uint64_t d = k->chunk_drop0;
    for (size_t j = 0; j < k->n_marks && k->mark_out[j] <= at; j++)
        d = k->mark_drop[j];
    return in_start + (uint64_t)at + (d - k->chunk_drop0);
}
