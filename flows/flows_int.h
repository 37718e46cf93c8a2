/* flows_int.h — internal to flows/: the analysis context and its results, shared by the
 * files of the analysis. Files, bottom first: store.c (the context, the record store and
 * its window, the stages in order), infer.c (endpoints, pairs, flowlets, jobs, pair
 * kinds, layout), steps.c (step boundaries with bocpd.h, the ZeRO-3 fallback with
 * period.h, timelines, slow steps), links.c (degraded links), ports.c (switch ports),
 * xcheck.c (the cross-check with Argus), write.c (flows.json, timeline.csv, flows.md)
 * with write_views.c (their parts for the ports and the cross-check).
 */
#ifndef ARGUS_FLOWS_FLOWS_INT_H
#define ARGUS_FLOWS_FLOWS_INT_H

#include <math.h>
#include <yajl/yajl_gen.h>

#include "flows/flows.h"

enum fl_kind { FL_UNKNOWN = 0, FL_DP = 1, FL_PP = 2 };

struct fl_rec {         /* a kept record, compacted */
    uint64_t ts, te, bytes, packets;
    uint32_t a, b;      /* endpoints (src, dst) */
    uint32_t pair;
    uint32_t obs;       /* observation point */
    uint16_t sport, dport;
    uint8_t dir;        /* 0: from the pair's lower endpoint */
    uint8_t dup;        /* a second observation of an earlier record: skipped */
};

struct fl_flowlet {
    uint64_t ts, te, bytes, packets;  /* packets as scaled by the sampling interval */
    uint32_t pair;
    uint8_t dir;
};

struct fl_ep {
    struct argus_flow_addr ip;
    const struct argus_topo_entry *topo;  /* NULL: not in the topology */
    int job, dp_group, pipeline, stage;
    int nodelist;                         /* the node list its host is in; -1: none */
    size_t nsteps;
    uint64_t *step_end, *dp_start;        /* nsteps each (owned) */
    size_t gaps, gaps_agree;              /* gap classifications, and where both agreed */
    int access_link, uplink;              /* link indices, -1: none */
};

struct fl_pair {
    uint32_t a, b;                        /* a < b */
    int job;
    enum fl_kind kind;
    uint64_t bytes[2], flowlets[2];
    size_t fl_first, fl_n;                /* its flowlets in f->fl, sorted by dir, ts */
};

struct fl_slow {
    size_t step;
    uint64_t dur_ns;
    double z;
    int dp_group;                         /* latest-starting DP group; -1 none */
};

struct fl_job {
    size_t nep;
    uint32_t *ep;                         /* endpoint indices (owned) */
    int world, dp, pp, tp;
    int ndp_groups, npipes;
    int layout_regular;                   /* every DP group and pipeline of the modal size */
    size_t npairs_dp, npairs_pp;
    size_t nsteps;
    uint64_t *step_end, *step_dur;        /* nsteps (dur[0] = 0) (owned) */
    double step_med_ns, step_mad_ns;
    size_t eps_off_steps;                 /* endpoints whose step count differs */
    double boundary_agreement;            /* over the job's endpoints' gaps */
    size_t boundary_gaps, boundary_disagree; /* gaps judged; where BOCPD and the baseline
                                                disagree */
    double acf_period_ns, acf_peak;       /* the byte rate's period (0: none) and its
                                             autocorrelation (flows/period.h) */
    int step_method;                      /* 0: the gaps between bursts; 1: some endpoints'
                                             tracked with the period (no clean end-of-step
                                             burst) */
    size_t eps_tracked;                   /* those endpoints */
    struct fl_slow *slow;
    size_t nslow, slow_cap;
    int *pipe_order;                      /* per pipeline, stage 0's endpoint... flattened:
                                             npipes x pp endpoint indices, -1 padded */
};

struct fl_link {
    char name[2 * ARGUS_TOPO_NAME + 8];
    int tier;                             /* 0: NIC to leaf, 1: leaf uplink */
    uint32_t *m;                          /* its flowlets: indices into the analysis'
                                             bandwidth table (owned) */
    size_t n, cap;
    size_t n_dp;                          /* of them, a DP-only job's DP flowlets */
    size_t slow;                          /* active flowlets below the tier's rate */
    double p90, z, drop;
    unsigned win_used, win_flagged;
    int degraded;
};

struct argus_flows {
    struct argus_flows_opts o;
    const struct argus_topo *topo;
    struct argus_ports *ports;            /* NULL: none given */
    struct fl_xcheck *xcheck;             /* NULL: no in-band run to compare with */
    struct argus_flow_rec *store;
    size_t nstore;
    uint64_t filtered, dropped;
    uint64_t t_newest, expired;           /* window: the newest end seen, records expired */
    size_t evict;                         /* window: the next slot to expire (arrival order) */
    uint32_t max_sampling;                /* the largest sampling interval kept */
    uint64_t duplicates;                  /* records seen again at another observation point */
    char **nodes;                         /* node lists, each "h1,h2,..." (owned) */
    size_t nnodes, nodes_cap;
    uint64_t pairs_across_lists;          /* pairs between two node lists: not joined */
    int analysed;
    /* results */
    struct fl_ep *ep;
    size_t nep;
    struct fl_pair *pair;
    size_t npair;
    struct fl_flowlet *fl;
    size_t nfl;
    struct fl_job *job;
    size_t njob;
    struct fl_link *link;
    size_t nlink, link_cap;
    uint64_t t_first, t_last;
};

/* infer.c */
int fl_infer(struct argus_flows *f, char *errbuf, size_t errlen);
/* steps.c */
int fl_steps(struct argus_flows *f);
/* Split log gaps g[n] (in time order) into boundary (1) or not (0): the baseline (the
 * largest jump of the sorted gaps, FL_LEVEL_JUMP at least) into b0, Bayesian online
 * change-point detection with bd (flows/bocpd.h) into b1 (either may be NULL). When the
 * gaps hold no jump of FL_LEVEL_JUMP they are one class: all boundaries when the least is
 * above ref (the log of twice the median burst length), else none. Returns 0, or -ENOMEM.
 * Exposed for the unit test. */
#define FL_LEVEL_JUMP (2 * M_LN2)   /* a factor 4; a lost step doubles a gap */
struct fl_bocpd;
int fl_split_gaps(struct fl_bocpd *bd, const double *g, size_t n, double ref,
                  unsigned char *b0, unsigned char *b1);
/* links.c */
int fl_links(struct argus_flows *f);
/* write.c: a growing text buffer (oom set on failure), a JSON key and unsigned value */
struct fl_sbuf {
    char *p;
    size_t n, cap;
    int oom;
};
void fl_sb_printf(struct fl_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int fl_gen_u(yajl_gen g, const char *k, uint64_t v);
/* write_views.c: the switch ports (ranked: degraded first, then by z; NULL on no memory)
 * and the cross-check, in flows.json and flows.md */
struct fl_xcheck;
size_t *fl_ports_ranked(const struct argus_ports *ps);
int fl_gen_ports(yajl_gen g, const struct argus_ports *ps, const size_t *rank);
int fl_gen_xcheck(yajl_gen g, const struct fl_xcheck *x);
void fl_md_ports(struct fl_sbuf *b, const struct argus_ports *ps, const size_t *prank);
void fl_md_xcheck(struct fl_sbuf *b, const struct argus_flows *f, const struct fl_xcheck *x);
/* robust statistics over v[n] (sorted in place): median, MAD (raw) */
double fl_median(double *v, size_t n);
double fl_mad(double *v, size_t n, double med);
double fl_quantile(double *v, size_t n, double q);

#endif /* ARGUS_FLOWS_FLOWS_INT_H */
