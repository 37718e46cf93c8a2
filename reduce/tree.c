/* tree.c — k-ary tree arithmetic for the reduction (see tree.h). */
#include "reduce/tree.h"

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
