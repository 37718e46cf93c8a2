/* stackrec.h — host call stack samples as rank 0 keeps them (docs/ALGORITHMS.md, "Host
 * call stacks"): one record per sample and kind of frames (Python or native), its wire
 * message (magic, version, CRC32C) from a rank to rank 0, and the bounded set rank 0
 * holds them in for the merge (analysis/hoststacks.h) and the writers (report/).
 * Plain data; the set allocates once, at init. One owner, one thread.
 */
#ifndef ARGUS_COMMON_STACKREC_H
#define ARGUS_COMMON_STACKREC_H

#include <stddef.h>
#include <stdint.h>

#define ARGUS_STACKREC_TEXT 2048    /* folded frames, NUL included */
#define ARGUS_STACKREC_MAGIC 0x4b545341u /* "ASTK" */
#define ARGUS_STACKREC_VERSION 1
/* the largest message: header, text, CRC */
#define ARGUS_STACKREC_WIRE_MAX (52 + ARGUS_STACKREC_TEXT + 4)
#define ARGUS_STACKREQ_MAGIC 0x514b5341u /* "ASKQ" */
#define ARGUS_STACKREQ_WIRE 22           /* magic, version, for_rank, for_step, CRC */

/* why a sample was taken: its own stall, a hang, or rank 0 asked this healthy peer for
 * what it does while another rank (for_rank, at its step for_step) stalls */
enum { ARGUS_STACK_WHY_STALL = 1, ARGUS_STACK_WHY_HANG = 2, ARGUS_STACK_WHY_PEER = 3 };
enum { ARGUS_STACK_PYTHON = 1, ARGUS_STACK_NATIVE = 2 };

/* One sample. folded: frames outermost first, ';' between them; a Python frame is
 * "function (file:line)", a native one "symbol (object)". */
struct argus_stackrec {
    uint32_t rank;
    uint32_t stalled_ms; /* how long the rank's step loop had made no mark */
    uint64_t step;       /* the step open at the sample */
    uint64_t t_ns;       /* CLOCK_REALTIME of the sample, the rank's clock */
    uint32_t cost_ns;    /* the sample's cost on the training thread */
    uint8_t why, lang;
    uint16_t nframes;
    uint32_t for_rank;   /* ARGUS_STACK_WHY_PEER: the stalled rank it was asked for */
    uint64_t for_step;   /* ... and that rank's step */
    char folded[ARGUS_STACKREC_TEXT];
};

/* Encode r into buf (cap >= ARGUS_STACKREC_WIRE_MAX is always enough): bytes, or
 * -ENOSPC. */
long argus_stackrec_encode(const struct argus_stackrec *r, uint8_t *buf, size_t cap);
/* Decode one message; never trusts it: 0, or -EINVAL with errbuf naming what is wrong
 * (magic, version, length, CRC, text). */
int argus_stackrec_decode(const uint8_t *buf, size_t len, struct argus_stackrec *r,
                          char *errbuf, size_t errlen);

/* Rank 0's request to a healthy peer: sample now, for the stall of for_rank at for_step.
 * encode writes ARGUS_STACKREQ_WIRE bytes; decode: 0 or -EINVAL (errbuf). */
void argus_stackreq_encode(uint32_t for_rank, uint64_t for_step,
                           uint8_t buf[ARGUS_STACKREQ_WIRE]);
int argus_stackreq_decode(const uint8_t *buf, size_t len, uint32_t *for_rank,
                          uint64_t *for_step, char *errbuf, size_t errlen);

/* Rank 0's samples: at most max (the first ones kept, later ones counted as dropped). */
struct argus_stackset {
    struct argus_stackrec *v;
    size_t n, max;
    uint64_t dropped;
};
/* 0 or -ENOMEM (allocates max records now). */
int argus_stackset_init(struct argus_stackset *s, size_t max);
void argus_stackset_free(struct argus_stackset *s);
/* Copy r in: 1 kept, 0 dropped (full). No allocation. */
int argus_stackset_add(struct argus_stackset *s, const struct argus_stackrec *r);

#endif /* ARGUS_COMMON_STACKREC_H */
