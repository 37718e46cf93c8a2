/* store.c — the context of flows/flows.h: options, the record store (allocated by
 * create; add never allocates), the node lists, and argus_flows_analyse, which runs the
 * analysis' stages (flows/infer.c, steps.c, links.c, ports.c) in order.
 *
 * With opts.window_ns the store is a window over flow time: once full, a new record takes
 * the slot of the oldest one that arrived when that one ended more than the window before
 * the newest end seen (expired, counted), else the new record is dropped (counted); the
 * analysis then uses only the records that end inside the window [newest - window,
 * newest] and counts the others as expired. Memory is the store's, whatever the input's
 * length; per-pair state is built per analysis from the window's records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"
#include "common/grow.h"
#include "flows/flows_int.h"
#include "flows/xcheck.h"

void argus_flows_opts_default(struct argus_flows_opts *o)
{
    memset(o, 0, sizeof *o);
    o->port = 4791;
    o->merge_gap_ns = 100000;
    o->k_slow = 3.0;
    o->k_link = 3.0;
    o->link_drop = 0.1;
    o->link_windows = 4;
    o->max_records = 2000000;
}

int argus_flows_create(const struct argus_flows_opts *o, struct argus_flows **out,
                       char *errbuf, size_t errlen)
{
    struct argus_flows *f;

    if (o->max_records == 0 || o->max_records > ((size_t)1 << 32)) {
        argus_seterr(errbuf, errlen, "max records %zu: not in [1, 2^32]", o->max_records);
        return -EINVAL;
    }
    if (!(o->k_slow > 0) || !(o->k_link > 0) || o->link_windows == 0 || o->link_windows > 64) {
        argus_seterr(errbuf, errlen, "thresholds must be positive, windows in [1, 64]");
        return -EINVAL;
    }
    f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->o = *o;
    /* malloc, not calloc: pages never written are never resident */
    f->store = malloc(o->max_records * sizeof *f->store);
    if (!f->store) {
        free(f);
        return -ENOMEM;
    }
    *out = f;
    return 0;
}

void argus_flows_free(struct argus_flows *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nep; i++) {
        free(f->ep[i].step_end);
        free(f->ep[i].dp_start);
    }
    for (size_t i = 0; i < f->njob; i++) {
        free(f->job[i].ep);
        free(f->job[i].step_end);
        free(f->job[i].step_dur);
        free(f->job[i].slow);
        free(f->job[i].pipe_order);
    }
    for (size_t i = 0; i < f->nlink; i++) {
        free(f->link[i].m);
    }
    for (size_t i = 0; i < f->nnodes; i++)
        free(f->nodes[i]);
    free(f->nodes);
    free(f->link);
    free(f->job);
    free(f->fl);
    free(f->pair);
    free(f->ep);
    free(f->store);
    free(f);
}

int argus_flows_add(void *ctx, const struct argus_flow_rec *r)
{
    struct argus_flows *f = ctx;

    if (f->o.port && (r->proto != 17 || r->dst_port != f->o.port)) {
        f->filtered++;
        return 0;
    }
    if (f->o.window_ns && r->t_end_ns > f->t_newest)
        f->t_newest = r->t_end_ns;
    struct argus_flow_rec *s;
    if (f->nstore < f->o.max_records)
        s = &f->store[f->nstore++];
    else if (f->o.window_ns && f->store[f->evict].t_end_ns + f->o.window_ns < f->t_newest) {
        s = &f->store[f->evict];   /* the oldest arrival, out of the window: expired */
        f->evict = f->evict + 1 == f->o.max_records ? 0 : f->evict + 1;
        f->expired++;
    } else {
        f->dropped++;
        return 0;
    }
    *s = *r;
    if (r->sampling > f->max_sampling)
        f->max_sampling = r->sampling;
    if (r->sampling > 1) {
        s->bytes *= r->sampling;
        s->packets *= r->sampling;
    }
    return 0;
}

void argus_flows_set_topology(struct argus_flows *f, const struct argus_topo *t) { f->topo = t; }

void argus_flows_set_ports(struct argus_flows *f, struct argus_ports *ps) { f->ports = ps; }

void argus_flows_set_xcheck(struct argus_flows *f, struct fl_xcheck *x) { f->xcheck = x; }

int argus_flows_add_nodes(struct argus_flows *f, const char *hosts, char *errbuf,
                          size_t errlen)
{
    if (!hosts[0] || f->nnodes >= 4096) {
        argus_seterr(errbuf, errlen, "node list %s", hosts[0] ? "past 4096 lists" : "empty");
        return -EINVAL;
    }
    if (argus_grow(&f->nodes, &f->nodes_cap, f->nnodes + 1, sizeof *f->nodes, 8))
        return -ENOMEM;
    if (!(f->nodes[f->nnodes] = strdup(hosts)))
        return -ENOMEM;
    f->nnodes++;
    return 0;
}

void argus_flows_counts(const struct argus_flows *f, uint64_t *kept, uint64_t *filtered,
                        uint64_t *dropped)
{
    *kept = f->nstore, *filtered = f->filtered, *dropped = f->dropped;
}

int argus_flows_analyse(struct argus_flows *f, char *errbuf, size_t errlen)
{
    int rc;

    if (f->analysed) {
        argus_seterr(errbuf, errlen, "analysed already");
        return -EINVAL;
    }
    f->analysed = 1;
    if (f->o.window_ns) {   /* only the window's records */
        size_t k = 0;
        for (size_t i = 0; i < f->nstore; i++)
            if (f->store[i].t_end_ns + f->o.window_ns >= f->t_newest)
                f->store[k++] = f->store[i];
        f->expired += f->nstore - k;
        f->nstore = k;
    }
    int ports = f->ports && f->ports->ns > 0;
    if (ports && fl_ports_analyse(f->ports, f->topo, f->o.k_link, f->o.link_drop,
                                  f->o.link_windows) != 0) {
        argus_seterr(errbuf, errlen, "out of memory in the port view");
        return -ENOMEM;
    }
    if (f->nstore == 0 && ports)   /* the port counters alone */
        return 0;
    if ((rc = fl_infer(f, errbuf, errlen)) != 0)
        return rc;
    if ((rc = fl_steps(f)) != 0 || (rc = fl_links(f)) != 0 ||
        (f->xcheck && (rc = fl_xcheck_run(f->xcheck, f)) != 0)) {
        argus_seterr(errbuf, errlen, "out of memory in the analysis");
        return rc;
    }
    return 0;
}
