/*
 * --inject parser (see sim_inject.h).
 */
#include "sim/sim_inject.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* What the simulator cannot do, in the words of its refusal; NULL when it can. */
static const char *refusal(const struct fault *item, uint32_t app_iterations, char *why,
                           size_t capacity)
{
    if (fault_timed_by_job(item) && app_iterations == 0)
        return "the simulator runs no application to time a fault by (expected --app, or a "
               "time like 'kill 3 at 2ms')";
    if (item->iteration > app_iterations) {
        snprintf(why, capacity, "the job has %" PRIu32 " iterations (expected iteration 1..%" PRIu32
                 ")", app_iterations, app_iterations);
        return why;
    }
    switch (item->kind) {
    case FAULT_REBOOT:
        return "the simulator cannot reboot a node (expected kill, then restart)";
    case FAULT_RESUME:
        return "the simulator cannot resume a node (expected 'hang N at T for D')";
    case FAULT_HANG:
        return item->duration_ns == 0
                   ? "the simulator needs the hang's length (expected 'hang N at T for D')"
                   : NULL;
    default:
        return NULL;
    }
}

bool sim_inject_parse(const char *text, const struct torus_geometry *geometry,
                      uint32_t app_iterations, struct fault_script *script, char *error,
                      size_t error_capacity)
{
    struct fault_script written;
    struct fault_script parsed = {0};
    memset(script, 0, sizeof *script);
    if (!fault_script_parse(text, &written, error, error_capacity)) {
        return false;
    }
    /* Groups and cuts, spelled out node by node and cable by cable. */
    bool ok = fault_script_check_torus(&written, geometry, error, error_capacity) &&
              fault_script_expand(&written, geometry, &parsed, error, error_capacity);
    fault_script_free(&written);
    for (size_t i = 0; i < parsed.count && ok; i++) {
        struct fault item = parsed.items[i];
        char reason[96];
        const char *why = refusal(&item, app_iterations, reason, sizeof reason);
        if (why != NULL) {
            char shown[FAULT_TEXT_MAX];
            fault_format(&item, shown, sizeof shown);
            snprintf(error, error_capacity, "'%s': %s", shown, why);
            ok = false;
            break;
        }
        bool link = item.kind == FAULT_LINK_OFF || item.kind == FAULT_LINK_ON;
        if (link && item.link != FAULT_LINK_PAIR) {
            item.other = torus_geometry_neighbour(geometry, item.node, item.link);
            item.link = FAULT_LINK_PAIR;
        }
        /* Timed by iteration, the mend is due D after the fault fires: the
         * run schedules it then (the item keeps its "for D"). */
        uint64_t mend_after = link && !fault_timed_by_job(&item) ? item.duration_ns : 0;
        if (mend_after != 0) {
            item.duration_ns = 0;
        }
        ok = fault_script_add(script, &item);
        if (ok && mend_after != 0) {
            struct fault mend = item;
            mend.kind = FAULT_LINK_ON;
            mend.time_ns = item.time_ns + mend_after;
            ok = fault_script_add(script, &mend);
        }
        if (!ok) {
            snprintf(error, error_capacity, "out of memory");
        }
    }
    fault_script_free(&parsed);
    if (!ok) {
        fault_script_free(script);
    }
    return ok;
}

/* Items in time order, script order for equal times: as the run applies them. */
static int compare_items(const void *a, const void *b)
{
    const struct fault *const *x = a, *const *y = b;
    if ((*x)->time_ns != (*y)->time_ns) {
        return (*x)->time_ns < (*y)->time_ns ? -1 : 1;
    }
    return *x < *y ? -1 : *x > *y;
}

bool sim_inject_check(const struct fault *items, size_t count, uint32_t node_count,
                      uint32_t members, char *error, size_t error_capacity)
{
    const struct fault **order = calloc(count > 0 ? count : 1, sizeof *order);
    bool *running = calloc(node_count, sizeof *running);
    bool *by_iteration = calloc(node_count, sizeof *by_iteration);
    bool *joined = calloc(node_count, sizeof *joined);
    uint64_t *hung_until = calloc(node_count, sizeof *hung_until);
    if (order == NULL || running == NULL || by_iteration == NULL || joined == NULL ||
        hung_until == NULL) {
        snprintf(error, error_capacity, "out of memory");
        free(order);
        free(by_iteration);
        free(running);
        free(joined);
        free(hung_until);
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        order[i] = &items[i];
        if (fault_timed_by_job(&items[i])) {
            by_iteration[items[i].node] = true;
        }
    }
    qsort(order, count, sizeof *order, compare_items);
    for (uint32_t id = 0; id < node_count && id < members; id++) {
        running[id] = true;
    }
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++) {
        const struct fault *item = order[i];
        if (by_iteration[item->node]) {
            continue; /* when its node's faults happen is known only then: checked then */
        }
        uint32_t id = item->node;
        uint64_t t = item->time_ns;
        const char *why = NULL;
        switch (item->kind) {
        case FAULT_KILL:
        case FAULT_HANG:
        case FAULT_SUSPECT:
        case FAULT_APPKILL:
        case FAULT_LEAVE:
            if (!running[id]) {
                why = id >= members ? "is a spare that has not joined then (expected a running "
                                      "node)"
                                    : "is down then, killed earlier (expected a running node)";
            } else if (item->kind == FAULT_HANG && t < hung_until[id]) {
                why = "is still hung then (expected a hang after the last one ended)";
            } else if (item->kind == FAULT_SUSPECT && t < hung_until[id]) {
                why = "is hung then (expected a running node to suspect another)";
            }
            break;
        case FAULT_RESTART:
            if (running[id] || (id >= members && !joined[id])) {
                why = running[id] ? "is running then (expected a node killed earlier)"
                                  : "is a spare that has not joined then (expected a node "
                                    "killed earlier; a spare joins)";
            }
            break;
        case FAULT_JOIN:
            /* A join boots a node; a running one would ignore it, silently. */
            if (running[id]) {
                why = joined[id] ? "is running then, joined earlier (expected it killed again "
                                   "before another join)"
                                 : "is a running member then (expected a node killed earlier "
                                   "in the script, or a spare: see --members)";
            }
            break;
        default:
            break;
        }
        if (why != NULL) {
            char text[96];
            fault_format(item, text, sizeof text);
            snprintf(error, error_capacity, "'%s': node %" PRIu32 " %s", text, id, why);
            ok = false;
            break;
        }
        if (item->kind == FAULT_KILL || item->kind == FAULT_LEAVE) {
            running[id] = false; /* a leaver halts */
            hung_until[id] = 0;
        } else if (item->kind == FAULT_JOIN || item->kind == FAULT_RESTART) {
            running[id] = true;
            joined[id] = true;
        } else if (item->kind == FAULT_HANG) {
            hung_until[id] = t + item->duration_ns;
        }
    }
    free(order);
    free(running);
    free(by_iteration);
    free(joined);
    free(hung_until);
    return ok;
}
