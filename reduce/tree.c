/* tree.c — k-ary tree arithmetic for the reduction (see tree.h). */
#include "reduce/tree.h"

#include <errno.h>
#include <stdlib.h>

int argus_tree_parent(int r, int fanin)
{
    return r <= 0 ? -1 : (r - 1) / fanin;
}

int argus_tree_first_child(int r, int fanin)
{
    return r * fanin + 1;
}

int argus_tree_nchildren(int r, int size, int fanin)
{
    long first = (long)r * fanin + 1;

    if (first >= size)
        return 0;
    long last = first + fanin - 1;
    if (last > size - 1)
        last = size - 1;
    return (int)(last - first + 1);
}

int argus_tree_depth(int size, int fanin)
{
    int depth = 0;
    long covered = 1, level = 1;

    while (covered < size) {
        level *= fanin;
        covered += level;
        depth++;
    }
    return depth;
}

struct nr {
    int node, rank;
};

static int cmp_nr(const void *a, const void *b)
{
    const struct nr *x = a, *y = b;
    if (x->node != y->node)
        return (x->node > y->node) - (x->node < y->node);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int argus_tree_build_topo(int size, const int *node_of, int fanin, int *parent)
{
    if (size <= 0 || fanin < 2)
        return -EINVAL;
    struct nr *v = malloc((size_t)size * sizeof *v);
    int *leaders = malloc((size_t)size * sizeof *leaders);
    if (!v || !leaders) {
        free(v);
        free(leaders);
        return -ENOMEM;
    }
    for (int r = 0; r < size; r++)
        v[r] = (struct nr){node_of[r], r};
    qsort(v, (size_t)size, sizeof *v, cmp_nr);
    int nl = 0;
    for (int i = 0; i < size;) {
        int j = i;
        while (j < size && v[j].node == v[i].node)
            j++;
        /* members i..j-1 in rank order; v[i] leads */
        for (int m = i + 1; m < j; m++)
            parent[v[m].rank] = v[i + argus_tree_parent(m - i, fanin)].rank;
        leaders[nl++] = v[i].rank;
        i = j;
    }
    /* leaders in rank order: rank 0 first when it leads its node */
    int ok = 0;
    for (int i = 1; i < nl; i++) { /* insertion sort is fine: nl is the node count */
        int x = leaders[i], k = i - 1;
        while (k >= 0 && leaders[k] > x) {
            leaders[k + 1] = leaders[k];
            k--;
        }
        leaders[k + 1] = x;
    }
    if (nl > 0 && leaders[0] == 0) {
        ok = 1;
        for (int i = 0; i < nl; i++)
            parent[leaders[i]] = i == 0 ? -1 : leaders[argus_tree_parent(i, fanin)];
    }
    free(v);
    free(leaders);
    return ok ? 0 : -EINVAL;
}

int argus_tree_children_of(const int *parent, int size, int r, int *kids, int max)
{
    int n = 0;
    for (int x = 0; x < size; x++)
        if (parent[x] == r) {
            if (n < max)
                kids[n] = x;
            n++;
        }
    return n;
}

int argus_tree_height_of(const int *parent, int size, int r)
{
    int h = 0;
    for (int x = 0; x < size; x++) {
        int d = 0;
        for (int y = x; y >= 0 && d <= size; y = parent[y], d++)
            if (y == r) {
                if (d > h)
                    h = d;
                break;
            }
    }
    return h;
}

int argus_tree_depth_of(const int *parent, int size)
{
    int depth = 0;
    for (int x = 0; x < size; x++) {
        int d = 0;
        for (int y = x; parent[y] >= 0 && d <= size; y = parent[y])
            d++;
        if (d > depth)
            depth = d;
    }
    return depth;
}

int argus_tree_in_subtree(const int *parent, int size, int x, int r)
{
    for (int d = 0; x >= 0 && d <= size; x = parent[x], d++)
        if (x == r)
            return 1;
    return 0;
}
