/*
 * --inject parser (see sim_inject.h).
 */
#include "board/sim/sim_inject.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu/cli.h"

#define MAX_TOKENS 8

/* Splits off the next token delimited by any of delims (strtok_r is not C11). */
static char *next_token(char **cursor, const char *delims)
{
    char *p = *cursor;
    while (*p != '\0' && strchr(delims, *p) != NULL) {
        p++;
    }
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *start = p;
    while (*p != '\0' && strchr(delims, *p) == NULL) {
        p++;
    }
    if (*p != '\0') {
        *p++ = '\0';
    }
    *cursor = p;
    return start;
}

static bool parse_node(const char *text, const struct torus_geometry *g, uint32_t *node)
{
    if (text == NULL || !isdigit((unsigned char)text[0])) {
        return false;
    }
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    if (*end != '\0' || value >= g->node_count) {
        return false;
    }
    *node = (uint32_t)value;
    return true;
}

static bool parse_cut(const char *text, const struct torus_geometry *g, int *dim, uint32_t *below)
{
    static const char dims[] = "xyzuvw";
    const char *lt = strchr(text, '<');
    if (lt == NULL) {
        return false;
    }
    size_t name_length = (size_t)(lt - text);
    if (name_length == 2 && strncmp(text, "id", 2) == 0) {
        *dim = -1;
    } else if (name_length == 1 && strchr(dims, text[0]) != NULL && text[0] != '\0') {
        *dim = (int)(strchr(dims, text[0]) - dims);
        if ((unsigned)*dim >= g->dims) {
            return false;
        }
    } else {
        return false;
    }
    const char *number = lt + 1;
    if (!isdigit((unsigned char)number[0])) {
        return false;
    }
    char *end = NULL;
    unsigned long value = strtoul(number, &end, 10);
    if (*end != '\0' || value == 0) {
        return false;
    }
    uint32_t limit = *dim < 0 ? g->node_count : g->size[*dim];
    if (value >= limit) {
        return false;
    }
    *below = (uint32_t)value;
    return true;
}

/*
 * A clause that failed because it names a node the torus does not have:
 * that node, so that the error can say so rather than show the syntax.
 */
static bool find_missing_node(char **tok, int n, const struct torus_geometry *g,
                              unsigned long *id)
{
    int names = 0;
    if (strcmp(tok[0], "kill") == 0 || strcmp(tok[0], "join") == 0 ||
        strcmp(tok[0], "hang") == 0) {
        names = 1;
    } else if (strcmp(tok[0], "suspect") == 0 || strcmp(tok[0], "link") == 0 ||
               strcmp(tok[0], "block") == 0) {
        names = 2;
    }
    for (int i = 1; i <= names && i < n; i++) {
        size_t digits = strspn(tok[i], "0123456789");
        if (digits > 0 && digits <= 9 && tok[i][digits] == '\0') {
            unsigned long value = strtoul(tok[i], NULL, 10);
            if (value >= g->node_count) {
                *id = value;
                return true;
            }
        }
    }
    return false;
}

/* Parses one clause (already split into tokens). */
static bool parse_clause(char **tok, int n, const struct torus_geometry *g,
                         struct sim_injection *item, const char **expected)
{
    memset(item, 0, sizeof *item);
    if (strcmp(tok[0], "kill") == 0 || strcmp(tok[0], "join") == 0) {
        *expected = "kill|join N at T";
        item->kind = tok[0][0] == 'k' ? SIM_INJECT_KILL : SIM_INJECT_JOIN;
        return n == 4 && parse_node(tok[1], g, &item->node) && strcmp(tok[2], "at") == 0 &&
               cli_parse_time_ns(tok[3], true, &item->time_ns);
    }
    if (strcmp(tok[0], "hang") == 0) {
        *expected = "hang N at T for D";
        item->kind = SIM_INJECT_HANG;
        return n == 6 && parse_node(tok[1], g, &item->node) && strcmp(tok[2], "at") == 0 &&
               cli_parse_time_ns(tok[3], true, &item->time_ns) && strcmp(tok[4], "for") == 0 &&
               cli_parse_time_ns(tok[5], false, &item->duration_ns);
    }
    if (strcmp(tok[0], "suspect") == 0) {
        *expected = "suspect D N at T (D and N different nodes)";
        item->kind = SIM_INJECT_SUSPECT;
        return n == 5 && parse_node(tok[1], g, &item->node) &&
               parse_node(tok[2], g, &item->other) && item->node != item->other &&
               strcmp(tok[3], "at") == 0 && cli_parse_time_ns(tok[4], true, &item->time_ns);
    }
    if (strcmp(tok[0], "link") == 0) {
        *expected = "link A B off|on at T (A and B torus neighbours)";
        bool ok = n == 6 && parse_node(tok[1], g, &item->node) &&
                  parse_node(tok[2], g, &item->other) && strcmp(tok[4], "at") == 0 &&
                  cli_parse_time_ns(tok[5], true, &item->time_ns) &&
                  torus_geometry_distance(g, item->node, item->other) == 1;
        if (ok && strcmp(tok[3], "off") == 0) {
            item->kind = SIM_INJECT_LINK_OFF;
        } else if (ok && strcmp(tok[3], "on") == 0) {
            item->kind = SIM_INJECT_LINK_ON;
        } else {
            ok = false;
        }
        return ok;
    }
    if (strcmp(tok[0], "block") == 0) {
        *expected = "block A B at T for D (A and B different nodes)";
        item->kind = SIM_INJECT_BLOCK;
        return n == 7 && parse_node(tok[1], g, &item->node) &&
               parse_node(tok[2], g, &item->other) && item->node != item->other &&
               strcmp(tok[3], "at") == 0 && cli_parse_time_ns(tok[4], true, &item->time_ns) &&
               strcmp(tok[5], "for") == 0 && cli_parse_time_ns(tok[6], false, &item->duration_ns);
    }
    if (strcmp(tok[0], "partition") == 0) {
        *expected = "partition x<K at T (x y z u v w within the dims, or id<K; 0 < K < size)";
        item->kind = SIM_INJECT_PARTITION;
        return n == 4 && parse_cut(tok[1], g, &item->dim, &item->below) &&
               strcmp(tok[2], "at") == 0 && cli_parse_time_ns(tok[3], true, &item->time_ns);
    }
    if (strcmp(tok[0], "heal") == 0) {
        *expected = "heal at T";
        item->kind = SIM_INJECT_HEAL;
        return n == 3 && strcmp(tok[1], "at") == 0 && cli_parse_time_ns(tok[2], true, &item->time_ns);
    }
    *expected = "kill, join, hang, suspect, link, block, partition or heal";
    return false;
}

bool sim_inject_parse(const char *text, const struct torus_geometry *geometry,
                      struct sim_injection **items, size_t *count, char *error,
                      size_t error_capacity)
{
    *items = NULL;
    *count = 0;
    size_t length = strlen(text);
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        snprintf(error, error_capacity, "out of memory");
        return false;
    }
    memcpy(copy, text, length + 1);
    size_t capacity = 0;
    bool ok = true;
    char *clause_cursor = copy;
    for (char *clause = next_token(&clause_cursor, ";"); clause != NULL && ok;
         clause = next_token(&clause_cursor, ";")) {
        char *tok[MAX_TOKENS];
        int n = 0;
        char *word_cursor = clause;
        char original[128];
        snprintf(original, sizeof original, "%s", clause);
        for (char *w = next_token(&word_cursor, " \t"); w != NULL;
             w = next_token(&word_cursor, " \t")) {
            if (n == MAX_TOKENS) {
                n++;
                break;
            }
            tok[n++] = w;
        }
        if (n == 0) {
            continue; /* empty clause, e.g. a trailing ';' */
        }
        struct sim_injection item;
        const char *expected = "";
        if (n > MAX_TOKENS || !parse_clause(tok, n, geometry, &item, &expected)) {
            char *trim = original;
            while (*trim == ' ') {
                trim++;
            }
            unsigned long missing = 0;
            if (n <= MAX_TOKENS && find_missing_node(tok, n, geometry, &missing)) {
                snprintf(error, error_capacity,
                         "'%s': node %lu does not exist (expected 0..%" PRIu32 ")", trim,
                         missing, geometry->node_count - 1u);
            } else {
                snprintf(error, error_capacity, "'%s' is not a fault (expected %s)", trim,
                         expected);
            }
            ok = false;
            break;
        }
        if (*count == capacity) {
            capacity = capacity == 0 ? 8 : capacity * 2;
            struct sim_injection *grown = realloc(*items, capacity * sizeof *grown);
            if (grown == NULL) {
                snprintf(error, error_capacity, "out of memory");
                ok = false;
                break;
            }
            *items = grown;
        }
        (*items)[(*count)++] = item;
    }
    free(copy);
    if (!ok) {
        free(*items);
        *items = NULL;
        *count = 0;
    }
    return ok;
}

void sim_inject_format(const struct sim_injection *item, char *out, size_t capacity)
{
    static const char dims[] = "xyzuvw";
    char at[CLI_TIME_TEXT_MAX], length[CLI_TIME_TEXT_MAX];
    const char *t = cli_format_time(item->time_ns, at);
    const char *d = cli_format_time(item->duration_ns, length);
    switch (item->kind) {
    case SIM_INJECT_KILL:
        snprintf(out, capacity, "kill %" PRIu32 " at %s", item->node, t);
        break;
    case SIM_INJECT_JOIN:
        snprintf(out, capacity, "join %" PRIu32 " at %s", item->node, t);
        break;
    case SIM_INJECT_HANG:
        snprintf(out, capacity, "hang %" PRIu32 " at %s for %s", item->node, t, d);
        break;
    case SIM_INJECT_SUSPECT:
        snprintf(out, capacity, "suspect %" PRIu32 " %" PRIu32 " at %s", item->node,
                 item->other, t);
        break;
    case SIM_INJECT_LINK_OFF:
    case SIM_INJECT_LINK_ON:
        snprintf(out, capacity, "link %" PRIu32 " %" PRIu32 " %s at %s", item->node,
                 item->other, item->kind == SIM_INJECT_LINK_OFF ? "off" : "on", t);
        break;
    case SIM_INJECT_BLOCK:
        snprintf(out, capacity, "block %" PRIu32 " %" PRIu32 " at %s for %s", item->node,
                 item->other, t, d);
        break;
    case SIM_INJECT_PARTITION:
        if (item->dim < 0) {
            snprintf(out, capacity, "partition id<%" PRIu32 " at %s", item->below, t);
        } else {
            snprintf(out, capacity, "partition %c<%" PRIu32 " at %s", dims[item->dim],
                     item->below, t);
        }
        break;
    case SIM_INJECT_HEAL:
        snprintf(out, capacity, "heal at %s", t);
        break;
    default:
        snprintf(out, capacity, "?");
        break;
    }
}

/* Items in time order, script order for equal times: as the run applies them. */
static int compare_items(const void *a, const void *b)
{
    const struct sim_injection *const *x = a, *const *y = b;
    if ((*x)->time_ns != (*y)->time_ns) {
        return (*x)->time_ns < (*y)->time_ns ? -1 : 1;
    }
    return *x < *y ? -1 : *x > *y;
}

bool sim_inject_check(const struct sim_injection *items, size_t count, uint32_t node_count,
                      uint32_t members, char *error, size_t error_capacity)
{
    const struct sim_injection **order = calloc(count > 0 ? count : 1, sizeof *order);
    bool *running = calloc(node_count, sizeof *running);
    bool *joined = calloc(node_count, sizeof *joined);
    uint64_t *hung_until = calloc(node_count, sizeof *hung_until);
    if (order == NULL || running == NULL || joined == NULL || hung_until == NULL) {
        snprintf(error, error_capacity, "out of memory");
        free(order);
        free(running);
        free(joined);
        free(hung_until);
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        order[i] = &items[i];
    }
    qsort(order, count, sizeof *order, compare_items);
    for (uint32_t id = 0; id < node_count && id < members; id++) {
        running[id] = true;
    }
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++) {
        const struct sim_injection *item = order[i];
        uint32_t id = item->node;
        uint64_t t = item->time_ns;
        const char *why = NULL;
        switch (item->kind) {
        case SIM_INJECT_KILL:
        case SIM_INJECT_HANG:
        case SIM_INJECT_SUSPECT:
            if (!running[id]) {
                why = id >= members ? "is a spare that has not joined then (expected a running "
                                      "node)"
                                    : "is down then, killed earlier (expected a running node)";
            } else if (item->kind == SIM_INJECT_HANG && t < hung_until[id]) {
                why = "is still hung then (expected a hang after the last one ended)";
            } else if (item->kind == SIM_INJECT_SUSPECT && t < hung_until[id]) {
                why = "is hung then (expected a running node to suspect another)";
            }
            break;
        case SIM_INJECT_JOIN:
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
            sim_inject_format(item, text, sizeof text);
            snprintf(error, error_capacity, "'%s': node %" PRIu32 " %s", text, id, why);
            ok = false;
            break;
        }
        if (item->kind == SIM_INJECT_KILL) {
            running[id] = false;
            hung_until[id] = 0;
        } else if (item->kind == SIM_INJECT_JOIN) {
            running[id] = true;
            joined[id] = true;
        } else if (item->kind == SIM_INJECT_HANG) {
            hung_until[id] = t + item->duration_ns;
        }
    }
    free(order);
    free(running);
    free(joined);
    free(hung_until);
    return ok;
}
