/* flows_int.h — internal to flows/: the analysis context and its results, shared by the
 * files of the analysis. Files, bottom first: infer.c (store, endpoints, pairs, flowlets,
 * jobs, pair kinds, layout), steps.c (step boundaries, timelines, slow steps), links.c
 * (degraded links), write.c (flows.json, timeline.csv, flows.md).
 */
#ifndef ARGUS_FLOWS_FLOWS_INT_H
#define ARGUS_FLOWS_FLOWS_INT_H

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
    size_t slow;                          /* active flowlets below the tier's rate */
    double p90, z, drop;
    unsigned win_used, win_flagged;
    int degraded;
};

struct argus_flows {
    struct argus_flows_opts o;
    const struct argus_topo *topo;
    struct argus_flow_rec *store;
    size_t nstore;
    uint64_t filtered, dropped;
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
/* Split log gaps g[n] into boundary (1) or not (0): the baseline into b0, the mixture
 * into b1 (either may be NULL). When the sorted gaps hold no jump of a factor 2, they are
 * one class: all boundaries when the least is above ref (the log of twice the median
 * burst length), else none. Returns 0, or -ENOMEM. Exposed for the unit test. */
int fl_split_gaps(const double *g, size_t n, double ref, unsigned char *b0, unsigned char *b1);
/* links.c */
int fl_links(struct argus_flows *f);
/* robust statistics over v[n] (sorted in place): median, MAD (raw) */
double fl_median(double *v, size_t n);
double fl_mad(double *v, size_t n, double med);
double fl_quantile(double *v, size_t n, double q);

#endif /* ARGUS_FLOWS_FLOWS_INT_H */
