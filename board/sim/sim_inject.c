/*
 * --inject parser (see sim_inject.h).
 */
#include "board/sim/sim_inject.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool sim_parse_time(const char *text, uint64_t *ns)
{
    if (text == NULL || !isdigit((unsigned char)text[0])) {
        return false;
    }
    char *end = NULL;
    unsigned long long value = strtoull(text, &end, 10);
    uint64_t unit = 1;
    if (strcmp(end, "") == 0 || strcmp(end, "ns") == 0) {
        unit = 1;
    } else if (strcmp(end, "us") == 0) {
        unit = 1000;
    } else if (strcmp(end, "ms") == 0) {
        unit = 1000000;
    } else if (strcmp(end, "s") == 0) {
        unit = 1000000000;
    } else {
        return false;
    }
    if (value > UINT64_MAX / unit / 4) {
        return false;
    }
    *ns = (uint64_t)value * unit;
    return true;
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

/* Parses one clause (already split into tokens). */
static bool parse_clause(char **tok, int n, const struct torus_geometry *g,
                         struct sim_injection *item, const char **expected)
{
    memset(item, 0, sizeof *item);
    if (strcmp(tok[0], "kill") == 0 || strcmp(tok[0], "join") == 0) {
        *expected = "kill|join N at T";
        item->kind = tok[0][0] == 'k' ? SIM_INJECT_KILL : SIM_INJECT_JOIN;
        return n == 4 && parse_node(tok[1], g, &item->node) && strcmp(tok[2], "at") == 0 &&
               sim_parse_time(tok[3], &item->time_ns);
    }
    if (strcmp(tok[0], "hang") == 0) {
        *expected = "hang N at T for D";
        item->kind = SIM_INJECT_HANG;
        return n == 6 && parse_node(tok[1], g, &item->node) && strcmp(tok[2], "at") == 0 &&
               sim_parse_time(tok[3], &item->time_ns) && strcmp(tok[4], "for") == 0 &&
               sim_parse_time(tok[5], &item->duration_ns) && item->duration_ns > 0;
    }
    if (strcmp(tok[0], "suspect") == 0) {
        *expected = "suspect D N at T (D and N different nodes)";
        item->kind = SIM_INJECT_SUSPECT;
        return n == 5 && parse_node(tok[1], g, &item->node) &&
               parse_node(tok[2], g, &item->other) && item->node != item->other &&
               strcmp(tok[3], "at") == 0 && sim_parse_time(tok[4], &item->time_ns);
    }
    if (strcmp(tok[0], "link") == 0) {
        *expected = "link A B off|on at T (A and B torus neighbours)";
        bool ok = n == 6 && parse_node(tok[1], g, &item->node) &&
                  parse_node(tok[2], g, &item->other) && strcmp(tok[4], "at") == 0 &&
                  sim_parse_time(tok[5], &item->time_ns) &&
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
               strcmp(tok[3], "at") == 0 && sim_parse_time(tok[4], &item->time_ns) &&
               strcmp(tok[5], "for") == 0 && sim_parse_time(tok[6], &item->duration_ns) &&
               item->duration_ns > 0;
    }
    if (strcmp(tok[0], "partition") == 0) {
        *expected = "partition x<K at T (x y z u v w within the dims, or id<K; 0 < K < size)";
        item->kind = SIM_INJECT_PARTITION;
        return n == 4 && parse_cut(tok[1], g, &item->dim, &item->below) &&
               strcmp(tok[2], "at") == 0 && sim_parse_time(tok[3], &item->time_ns);
    }
    if (strcmp(tok[0], "heal") == 0) {
        *expected = "heal at T";
        item->kind = SIM_INJECT_HEAL;
        return n == 3 && strcmp(tok[1], "at") == 0 && sim_parse_time(tok[2], &item->time_ns);
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
            snprintf(error, error_capacity, "'%s' is not a fault (expected %s)", trim, expected);
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
    uint64_t t = item->time_ns;
    switch (item->kind) {
    case SIM_INJECT_KILL:
        snprintf(out, capacity, "kill %" PRIu32 " at %" PRIu64 "ns", item->node, t);
        break;
    case SIM_INJECT_JOIN:
        snprintf(out, capacity, "join %" PRIu32 " at %" PRIu64 "ns", item->node, t);
        break;
    case SIM_INJECT_HANG:
        snprintf(out, capacity, "hang %" PRIu32 " at %" PRIu64 "ns for %" PRIu64 "ns", item->node,
                 t, item->duration_ns);
        break;
    case SIM_INJECT_SUSPECT:
        snprintf(out, capacity, "suspect %" PRIu32 " %" PRIu32 " at %" PRIu64 "ns", item->node,
                 item->other, t);
        break;
    case SIM_INJECT_LINK_OFF:
    case SIM_INJECT_LINK_ON:
        snprintf(out, capacity, "link %" PRIu32 " %" PRIu32 " %s at %" PRIu64 "ns", item->node,
                 item->other, item->kind == SIM_INJECT_LINK_OFF ? "off" : "on", t);
        break;
    case SIM_INJECT_BLOCK:
        snprintf(out, capacity, "block %" PRIu32 " %" PRIu32 " at %" PRIu64 "ns for %" PRIu64 "ns",
                 item->node, item->other, t, item->duration_ns);
        break;
    case SIM_INJECT_PARTITION:
        if (item->dim < 0) {
            snprintf(out, capacity, "partition id<%" PRIu32 " at %" PRIu64 "ns", item->below, t);
        } else {
            snprintf(out, capacity, "partition %c<%" PRIu32 " at %" PRIu64 "ns", dims[item->dim],
                     item->below, t);
        }
        break;
    case SIM_INJECT_HEAL:
        snprintf(out, capacity, "heal at %" PRIu64 "ns", t);
        break;
    default:
        snprintf(out, capacity, "?");
        break;
    }
}
