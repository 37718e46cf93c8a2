/* placement.c — where this rank runs, looked up in an hwloc topology (placement.h): the GPU
 * by its PCI bus id, its NUMA node and locality, the nearest network device, the bound CPUs.
 * The only hwloc code of the tracer. Must not print, must not be called per event, never
 * exits; allocates only in create and hwloc's two bitmaps per fill.
 */
#include "tracer/placement.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errbuf.h"

#define PLACER_MAX_DEPTH 64 /* ancestors looked at; hwloc trees are far shallower */

struct argus_placer {
    hwloc_topology_t topo;
};

int argus_placer_create(const char *xml, struct argus_placer **out, char *errbuf,
                        size_t errlen)
{
    struct argus_placer *p = calloc(1, sizeof *p);
    int rc = 0;

    *out = NULL;
    if (!p || hwloc_topology_init(&p->topo) != 0) {
        free(p);
        argus_seterr(errbuf, errlen, "placement: out of memory for the hwloc topology");
        return -ENOMEM;
    }
    /* GPUs, NICs and the bridges that lead to them; nothing else of the PCI tree */
    hwloc_topology_set_io_types_filter(p->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (xml && hwloc_topology_set_xml(p->topo, xml) != 0) {
        rc = errno ? -errno : -EINVAL;
        argus_seterr(errbuf, errlen, "%s: not a readable hwloc topology XML (%s)", xml,
                     strerror(-rc));
        goto out;
    }
    if (hwloc_topology_load(p->topo) != 0) {
        rc = errno ? -errno : -EIO;
        argus_seterr(errbuf, errlen, "%s: hwloc cannot load the topology (%s)",
                     xml ? xml : "this machine", strerror(-rc));
        goto out;
    }
    *out = p;
out:
    if (rc) {
        hwloc_topology_destroy(p->topo);
        free(p);
    }
    return rc;
}

void argus_placer_free(struct argus_placer *p)
{
    if (!p)
        return;
    hwloc_topology_destroy(p->topo);
    free(p);
}

/* "dddd:bb:dd.f" or "bb:dd.f" (hex) into its parts; 0 or -EINVAL. */
static int parse_bus(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
    unsigned long v[4];
    char sep[4];
    int n = 0;
    const char *q = s;

    for (;;) {
        char *end;
        if (n == 4 || !((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f') ||
                        (*q >= 'A' && *q <= 'F')))
            return -EINVAL;
        v[n] = strtoul(q, &end, 16);
        sep[n++] = *end;
        if (*end == '\0')
            break;
        q = end + 1;
    }
    if (n == 3 && sep[0] == ':' && sep[1] == '.') { /* no domain */
        v[3] = v[2], v[2] = v[1], v[1] = v[0], v[0] = 0;
    } else if (!(n == 4 && sep[0] == ':' && sep[1] == ':' && sep[2] == '.')) {
        return -EINVAL;
    }
    if (v[0] > 0xffffffffUL || v[1] > 0xff || v[2] > 0x1f || v[3] > 7)
        return -EINVAL;
    *dom = (unsigned)v[0], *bus = (unsigned)v[1], *dev = (unsigned)v[2], *fn = (unsigned)v[3];
    return 0;
}

/* How far b is from a: *up, the steps from a up to their deepest common ancestor, and
 * *down, from there to b. 0, or -1 when none is found. */
static int distance(hwloc_obj_t a, hwloc_obj_t b, int *up, int *down)
{
    hwloc_obj_t chain[PLACER_MAX_DEPTH];
    int na = 0;

    for (hwloc_obj_t o = a; o && na < PLACER_MAX_DEPTH; o = o->parent)
        chain[na++] = o;
    int db = 0;
    for (hwloc_obj_t o = b; o && db < PLACER_MAX_DEPTH; o = o->parent, db++)
        for (int i = 0; i < na; i++)
            if (chain[i] == o) {
                *up = i;
                *down = db;
                return 0;
            }
    return -1;
}

/* The network device nearest to anchor, or NULL: the one whose common ancestor with the
 * anchor is fewest steps above it (behind the GPU's own PCI switch before one elsewhere on
 * its socket); on a tie an OpenFabrics device (an InfiniBand or RoCE port, the fabric the
 * collectives use) before a plain network one, then the fewest steps down to it. */
static hwloc_obj_t nearest_nic(hwloc_topology_t t, hwloc_obj_t anchor)
{
    hwloc_obj_t best = NULL;
    int best_up = 0, best_down = 0, best_of = 0;

    for (hwloc_obj_t o = hwloc_get_next_osdev(t, NULL); o; o = hwloc_get_next_osdev(t, o)) {
        hwloc_obj_osdev_type_t ty = o->attr->osdev.type;
        int up, down, of = ty == HWLOC_OBJ_OSDEV_OPENFABRICS;
        if ((ty != HWLOC_OBJ_OSDEV_NETWORK && !of) || !o->name ||
            distance(anchor, o, &up, &down) != 0)
            continue;
        if (!best || up < best_up || (up == best_up && of > best_of) ||
            (up == best_up && of == best_of && down < best_down)) {
            best = o;
            best_up = up, best_down = down, best_of = of;
        }
    }
    return best;
}

/* The bound CPUs in list form, cut at a whole range with ",..." when too long. */
static void cpus_string(hwloc_const_bitmap_t set, struct argus_placement *out)
{
    char *s = out->cpuset;
    const size_t cap = sizeof out->cpuset;
    int n = hwloc_bitmap_list_snprintf(s, cap, set);

    if (n >= 0 && (size_t)n < cap)
        return;
    out->flags |= ARGUS_PLACE_CPUS_CUT;
    char *comma = NULL;
    for (char *c = s; *c && (size_t)(c - s) + 4 < cap; c++)
        if (*c == ',')
            comma = c;
    snprintf(comma ? comma : s, cap - (size_t)((comma ? comma : s) - s), ",...");
}

/* The single NUMA node of a node set, -1 for none or several. */
static int16_t one_node(hwloc_const_bitmap_t ns)
{
    return ns && hwloc_bitmap_weight(ns) == 1 ? (int16_t)hwloc_bitmap_first(ns) : -1;
}

int argus_placer_fill(const struct argus_placer *p, const char *bus, const char *cpus,
                      struct argus_placement *out, char *errbuf, size_t errlen)
{
    hwloc_topology_t t = p->topo;
    hwloc_obj_t gpu = NULL, gpu_near = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    out->flags = ARGUS_PLACE_KNOWN;
    out->gpu_numa = out->cpu_numa = -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), ns = hwloc_bitmap_alloc();
    if (!set || !ns) {
        argus_seterr(errbuf, errlen, "placement: out of memory");
        rc = -ENOMEM;
        goto out;
    }
    if (bus && *bus) {
        unsigned d, b, v, f;
        if (parse_bus(bus, &d, &b, &v, &f) != 0) {
            argus_seterr(errbuf, errlen, "placement: GPU bus id '%.32s' is not "
                         "[domain:]bus:device.function", bus);
            rc = -EINVAL;
        } else {
            snprintf(out->gpu_bus, sizeof out->gpu_bus, "%04x:%02x:%02x.%x", d, b, v, f);
            gpu = hwloc_get_pcidev_by_busid(t, d, b, v, f);
        }
    }
    if (gpu) {
        out->flags |= ARGUS_PLACE_GPU;
        gpu_near = hwloc_get_non_io_ancestor_obj(t, gpu);
        out->gpu_numa = gpu_near ? one_node(gpu_near->nodeset) : -1;
    }
    int have_cpus = 0;
    if (cpus) {
        if (hwloc_bitmap_list_sscanf(set, cpus) != 0 || hwloc_bitmap_iszero(set)) {
            argus_seterr(errbuf, errlen, "placement: CPU set '%.32s' is not a list like 0-3,8",
                         cpus);
            rc = -EINVAL;
        } else {
            have_cpus = 1;
        }
    } else {
        /* only this machine's topology tells the binding (not a recorded one) */
        have_cpus = hwloc_topology_is_thissystem(t) &&
                    hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0 &&
                    !hwloc_bitmap_iszero(set);
    }
    hwloc_obj_t anchor = gpu;
    if (have_cpus) {
        out->flags |= ARGUS_PLACE_CPUS;
        cpus_string(set, out);
        hwloc_cpuset_to_nodeset(t, set, ns);
        out->cpu_numa = one_node(ns);
        if (gpu_near && gpu_near->cpuset && hwloc_bitmap_isincluded(set, gpu_near->cpuset))
            out->flags |= ARGUS_PLACE_LOCAL;
        if (!anchor)
            anchor = hwloc_get_obj_covering_cpuset(t, set);
    }
    if (!anchor)
        anchor = hwloc_get_root_obj(t);
    hwloc_obj_t nic = nearest_nic(t, anchor);
    if (nic)
        snprintf(out->nic, sizeof out->nic, "%s", nic->name);
out:
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(ns);
    return rc;
}
