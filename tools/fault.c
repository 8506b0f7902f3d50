#include "tools/fault.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"

/* Words in one item: "link 6 x+ off at 6s for 2s" has 8. */
#define ITEM_WORDS_MAX 10
/* Longest item read (longer ones are refused, not cut). */
#define ITEM_CHARS_MAX 255

static const char *const kind_names[] = {
    [FAULT_KILL] = "kill",       [FAULT_HANG] = "hang",       [FAULT_RESUME] = "resume",
    [FAULT_LINK_OFF] = "link",   [FAULT_LINK_ON] = "link",    [FAULT_REBOOT] = "reboot",
    [FAULT_RESTART] = "restart", [FAULT_JOIN] = "join",       [FAULT_SUSPECT] = "suspect",
    [FAULT_BLOCK] = "block",     [FAULT_PARTITION] = "partition", [FAULT_HEAL] = "heal",
    [FAULT_APPKILL] = "appkill", [FAULT_LEAVE] = "leave",         [FAULT_CUT] = "cut",
    [FAULT_PING] = "ping",
};

#define EXPECTED_KINDS \
    "kill, hang, resume, link, reboot, restart, join, suspect, block, partition, heal, " \
    "appkill, leave, cut or ping"

static const char dimension_letters[] = "xyzuvw";

static const char *const compare_names[] = {
    [FAULT_LT] = "<", [FAULT_LE] = "<=", [FAULT_EQ] = "=", [FAULT_GE] = ">=", [FAULT_GT] = ">",
};

/* "x", "id": a dimension's letter, or id for -1. */
static const char *dim_name(int dim, char letter[2])
{
    if (dim < 0 || dim >= (int)(sizeof dimension_letters - 1))
        return "id";
    letter[0] = dimension_letters[dim];
    letter[1] = '\0';
    return letter;
}

/* The group "x>=4,y<2" into out. */
static void format_group(const struct fault *item, char *out, size_t capacity)
{
    size_t used = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < item->select_count && used < capacity; i++) {
        char letter[2];
        const struct fault_predicate *p = &item->select[i];
        int n = snprintf(out + used, capacity - used, "%s%s%s%" PRIu32, i == 0 ? "" : ",",
                         dim_name(p->dim, letter), compare_names[p->op], p->value);
        used += n > 0 ? (size_t)n : 0;
    }
}

bool fault_timed_by_job(const struct fault *item)
{
    return item->iteration != 0 || item->at_recovery;
}

const char *fault_kind_name(enum fault_kind kind)
{
    return (unsigned)kind < sizeof kind_names / sizeof kind_names[0] && kind_names[kind] != NULL
               ? kind_names[kind]
               : "?";
}

void fault_format(const struct fault *item, char *out, size_t capacity)
{
    char at[CLI_TIME_TEXT_MAX + 24], length[CLI_TIME_TEXT_MAX];
    const char *t = at;
    if (item->iteration != 0) {
        snprintf(at, sizeof at, "iteration %" PRIu32, item->iteration);
    } else if (item->at_recovery) {
        char delay[CLI_TIME_TEXT_MAX];
        if (item->time_ns != 0)
            snprintf(at, sizeof at, "recovery + %s", cli_format_time(item->time_ns, delay));
        else
            snprintf(at, sizeof at, "recovery");
    } else {
        t = cli_format_time(item->time_ns, at);
    }
    const char *d = cli_format_time(item->duration_ns, length);
    const char *name = fault_kind_name(item->kind);
    unsigned node = (unsigned)item->node, other = (unsigned)item->other;
    switch (item->kind) {
    case FAULT_LINK_OFF:
    case FAULT_LINK_ON: {
        char end[16];
        if (item->link == FAULT_LINK_PAIR)
            snprintf(end, sizeof end, "%u", other);
        else
            snprintf(end, sizeof end, "%s", torus_geometry_link_name(item->link));
        const char *state = item->kind == FAULT_LINK_OFF ? "off" : "on";
        if (item->duration_ns != 0)
            snprintf(out, capacity, "link %u %s %s at %s for %s", node, end, state, t, d);
        else
            snprintf(out, capacity, "link %u %s %s at %s", node, end, state, t);
        return;
    }
    case FAULT_SUSPECT:
        snprintf(out, capacity, "suspect %u %u at %s", node, other, t);
        return;
    case FAULT_BLOCK:
        snprintf(out, capacity, "block %u %u at %s for %s", node, other, t, d);
        return;
    case FAULT_PARTITION:
        if (item->dim < 0 || item->dim >= (int)(sizeof dimension_letters - 1))
            snprintf(out, capacity, "partition id<%" PRIu32 " at %s", item->below, t);
        else
            snprintf(out, capacity, "partition %c<%" PRIu32 " at %s",
                     dimension_letters[item->dim], item->below, t);
        return;
    case FAULT_HEAL:
        snprintf(out, capacity, "heal at %s", t);
        return;
    case FAULT_PING:
        snprintf(out, capacity, "ping all at %s", t);
        return;
    case FAULT_CUT: {
        char letter[2], except[24] = "", hold[CLI_TIME_TEXT_MAX + 8] = "";
        if (item->keep != 0)
            snprintf(except, sizeof except, " except %" PRIu32, item->keep);
        if (item->duration_ns != 0)
            snprintf(hold, sizeof hold, " for %s", d);
        snprintf(out, capacity, "cut %s=%" PRIu32 "|%" PRIu32 "%s at %s%s",
                 dim_name(item->dim, letter), item->plane, item->plane_next, except, t, hold);
        return;
    }
    default:
        break;
    }
    char who[FAULT_TEXT_MAX];
    if (item->select_count != 0)
        format_group(item, who, sizeof who);
    else
        snprintf(who, sizeof who, "%u", node);
    if (item->kind == FAULT_HANG && item->duration_ns != 0)
        snprintf(out, capacity, "hang %s at %s for %s", who, t, d);
    else
        snprintf(out, capacity, "%s %s at %s", name, who, t);
}

static bool same_group(const struct fault *a, const struct fault *b)
{
    if (a->select_count != b->select_count)
        return false;
    for (unsigned i = 0; i < a->select_count; i++)
        if (a->select[i].dim != b->select[i].dim || a->select[i].op != b->select[i].op ||
            a->select[i].value != b->select[i].value)
            return false;
    return true;
}

bool fault_equal(const struct fault *a, const struct fault *b)
{
    if (a->kind != b->kind || a->time_ns != b->time_ns || a->iteration != b->iteration ||
        a->at_recovery != b->at_recovery || !same_group(a, b))
        return false;
    switch (a->kind) {
    case FAULT_CUT:
        return a->dim == b->dim && a->plane == b->plane && a->plane_next == b->plane_next &&
               a->keep == b->keep && a->duration_ns == b->duration_ns;
    case FAULT_HEAL:
    case FAULT_PING:
        return true;
    case FAULT_PARTITION:
        return a->dim == b->dim && a->below == b->below;
    case FAULT_SUSPECT:
        return a->node == b->node && a->other == b->other;
    case FAULT_BLOCK:
        return a->node == b->node && a->other == b->other && a->duration_ns == b->duration_ns;
    case FAULT_LINK_OFF:
    case FAULT_LINK_ON:
        return a->node == b->node && a->link == b->link && a->duration_ns == b->duration_ns &&
               (a->link != FAULT_LINK_PAIR || a->other == b->other);
    case FAULT_HANG:
        return a->node == b->node && a->duration_ns == b->duration_ns;
    default:
        return a->node == b->node;
    }
}

bool fault_script_add(struct fault_script *script, const struct fault *item)
{
    if (script->count == script->capacity) {
        size_t capacity = script->capacity == 0 ? 16 : script->capacity * 2;
        struct fault *grown = realloc(script->items, capacity * sizeof *grown);
        if (grown == NULL)
            return false;
        script->items = grown;
        script->capacity = capacity;
    }
    script->items[script->count++] = *item;
    return true;
}

void fault_script_free(struct fault_script *script)
{
    free(script->items);
    script->items = NULL;
    script->count = script->capacity = 0;
}

/* One item being parsed: its text for messages, and its words. */
struct item {
    char text[FAULT_TEXT_MAX];        /* as written, cut for messages */
    char buffer[ITEM_CHARS_MAX + 1];  /* words, NUL-separated */
    char *word[ITEM_WORDS_MAX];
    unsigned words;
};

/* Writes "'TEXT': reason" to error; returns false.  Every message of this file. */
__attribute__((format(printf, 4, 0))) static bool quoted_error(const char *text, char *error,
                                                               size_t capacity,
                                                               const char *format,
                                                               va_list arguments)
{
    char reason[240];
    vsnprintf(reason, sizeof reason, format, arguments);
    snprintf(error, capacity, "'%s': %s", text, reason);
    return false;
}

__attribute__((format(printf, 4, 5))) static bool item_error(const struct item *item,
                                                             char *error, size_t capacity,
                                                             const char *format, ...);
static bool item_error(const struct item *item, char *error, size_t capacity,
                       const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    quoted_error(item->text, error, capacity, format, arguments);
    va_end(arguments);
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static bool split_item(const char *begin, const char *end, struct item *item, char *error,
                       size_t capacity)
{
    size_t length = (size_t)(end - begin);
    memset(item, 0, sizeof *item);
    if (length < sizeof item->text) {
        memcpy(item->text, begin, length);
    } else {
        memcpy(item->text, begin, sizeof item->text - 4);
        memcpy(item->text + sizeof item->text - 4, "...", 4);
    }
    for (char *c = item->text; *c != '\0'; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
            *c = '?'; /* messages stay one printable line */
    if (length > ITEM_CHARS_MAX)
        return item_error(item, error, capacity, "item too long (expected e.g. 'kill 3 at 2s')");
    memcpy(item->buffer, begin, length);
    item->buffer[length] = '\0';
    for (size_t i = 0; i < length; i++) {
        unsigned char ch = (unsigned char)item->buffer[i];
        if (!is_space((char)ch) && (ch < 0x20 || ch > 0x7e))
            return item_error(item, error, capacity,
                              "holds a character that is not printable ASCII");
    }
    for (char *c = item->buffer; *c != '\0';) {
        while (is_space(*c))
            *c++ = '\0';
        if (*c == '\0')
            break;
        if (item->words == ITEM_WORDS_MAX)
            return item_error(item, error, capacity, "too many words (expected e.g. "
                                                     "'link 6 x+ off at 6s for 2s')");
        item->word[item->words++] = c;
        while (*c != '\0' && !is_space(*c))
            c++;
    }
    return true;
}

static const char *word_or_end(const struct item *item, unsigned i)
{
    return i < item->words ? item->word[i] : "(end)";
}

static bool parse_node(const struct item *item, unsigned w, uint32_t *node, char *error,
                       size_t capacity)
{
    char echo[CLI_ECHO_MAX + 4];
    uint64_t value = 0;
    if (w >= item->words)
        return item_error(item, error, capacity, "%s needs a node number (expected e.g. '%s')",
                          item->word[0],
                          strcmp(item->word[0], "suspect") == 0 ? "suspect 2 3 at 1s"
                          : strcmp(item->word[0], "block") == 0 ? "block 2 3 at 1s for 1s"
                          : strcmp(item->word[0], "link") == 0  ? "link 2 3 off at 1s"
                                                                : "kill 3 at 2s");
    if (!cli_parse_u64(item->word[w], 0, UINT32_MAX - 1u, &value))
        return item_error(item, error, capacity, "'%s' is not a node number (expected a "
                                                 "rank like 3)",
                          cli_echo(item->word[w], echo));
    *node = (uint32_t)value;
    return true;
}

/* "x<2", "id<5": the partition's cut (its range is checked against a torus later). */
bool fault_parse_cut(const char *text, int *dim, uint32_t *below)
{
    const char *lt = strchr(text, '<');
    if (lt == NULL)
        return false;
    size_t name_length = (size_t)(lt - text);
    if (name_length == 2 && strncmp(text, "id", 2) == 0)
        *dim = -1;
    else if (name_length == 1 && strchr(dimension_letters, text[0]) != NULL)
        *dim = (int)(strchr(dimension_letters, text[0]) - dimension_letters);
    else
        return false;
    uint64_t value = 0;
    if (!cli_parse_u64(lt + 1, 1, UINT32_MAX - 1u, &value))
        return false;
    *below = (uint32_t)value;
    return true;
}

/* "x", "id" (the first length characters of text): the dimension, -1 for id. */
static bool parse_dim(const char *text, size_t length, int *dim)
{
    if (length == 2 && strncmp(text, "id", 2) == 0) {
        *dim = -1;
        return true;
    }
    if (length != 1 || text[0] == '\0' || strchr(dimension_letters, text[0]) == NULL)
        return false;
    *dim = (int)(strchr(dimension_letters, text[0]) - dimension_letters);
    return true;
}

/* "x>=4,y<2": a group's predicates (their dimensions are checked against a torus later). */
static bool parse_group(const char *text, struct fault *f)
{
    f->select_count = 0;
    for (const char *p = text;;) {
        size_t span = strcspn(p, ",");
        if (f->select_count == FAULT_SELECT_MAX || span == 0)
            return false;
        char term[32];
        if (span >= sizeof term)
            return false;
        memcpy(term, p, span);
        term[span] = '\0';
        size_t name = strcspn(term, "<=>");
        struct fault_predicate *pred = &f->select[f->select_count];
        if (!parse_dim(term, name, &pred->dim))
            return false;
        const char *op = term + name;
        size_t op_length = op[0] != '=' && op[1] == '=' ? 2 : 1;
        pred->op = op_length == 2 ? (op[0] == '<' ? FAULT_LE : FAULT_GE)
                   : op[0] == '<' ? FAULT_LT
                   : op[0] == '>' ? FAULT_GT
                                  : FAULT_EQ;
        uint64_t value = 0;
        if (!cli_parse_u64(op + op_length, 0, UINT32_MAX - 1u, &value))
            return false;
        pred->value = (uint32_t)value;
        f->select_count++;
        if (p[span] == '\0')
            return true;
        p += span + 1;
    }
}

/* "x=3|4": a cut's two planes (checked against a torus later). */
static bool parse_plane(const char *text, struct fault *f)
{
    const char *equals = strchr(text, '=');
    const char *bar = equals != NULL ? strchr(equals, '|') : NULL;
    if (bar == NULL || !parse_dim(text, (size_t)(equals - text), &f->dim) || f->dim < 0)
        return false;
    char first[16];
    size_t length = (size_t)(bar - equals - 1);
    if (length == 0 || length >= sizeof first)
        return false;
    memcpy(first, equals + 1, length);
    first[length] = '\0';
    uint64_t a = 0, b = 0;
    if (!cli_parse_u64(first, 0, UINT32_MAX - 1u, &a) ||
        !cli_parse_u64(bar + 1, 0, UINT32_MAX - 1u, &b))
        return false;
    f->plane = (uint32_t)a;
    f->plane_next = (uint32_t)b;
    return true;
}

/* The kinds whose node may be a group. */
static bool takes_group(enum fault_kind kind)
{
    return kind == FAULT_KILL || kind == FAULT_HANG || kind == FAULT_RESUME ||
           kind == FAULT_REBOOT || kind == FAULT_RESTART || kind == FAULT_JOIN ||
           kind == FAULT_APPKILL || kind == FAULT_LEAVE;
}

static bool parse_item(const struct item *item, struct fault *out, char *error,
                       size_t capacity)
{
    char echo[CLI_ECHO_MAX + 4];
    struct fault f;
    memset(&f, 0, sizeof f);
    bool known = false;
    for (unsigned k = FAULT_KILL; k < FAULT_KIND_LIMIT && !known; k++) {
        if (k != FAULT_LINK_ON && strcmp(item->word[0], kind_names[k]) == 0) {
            f.kind = (enum fault_kind)k;
            known = true;
        }
    }
    if (!known)
        return item_error(item, error, capacity, "unknown action '%s' (expected %s)",
                          cli_echo(item->word[0], echo), EXPECTED_KINDS);
    unsigned w = 1;
    switch (f.kind) {
    case FAULT_HEAL:
        break;
    case FAULT_PING:
        if (strcmp(word_or_end(item, w), "all") != 0)
            return item_error(item, error, capacity,
                              "'%s' after ping: expected all (e.g. 'ping all at 2s')",
                              cli_echo(word_or_end(item, w), echo));
        w++;
        break;
    case FAULT_PARTITION:
        if (!fault_parse_cut(word_or_end(item, w), &f.dim, &f.below))
            return item_error(item, error, capacity,
                              "'%s' is not a cut (expected x<K, y<K ... w<K or id<K, K > 0)",
                              cli_echo(word_or_end(item, w), echo));
        w++;
        break;
    case FAULT_SUSPECT:
    case FAULT_BLOCK:
        if (!parse_node(item, w, &f.node, error, capacity) ||
            !parse_node(item, w + 1, &f.other, error, capacity))
            return false;
        if (f.node == f.other)
            return item_error(item, error, capacity,
                              "names node %u twice (expected two different nodes)",
                              (unsigned)f.node);
        w += 2;
        break;
    case FAULT_LINK_OFF: {
        if (!parse_node(item, w, &f.node, error, capacity))
            return false;
        w++;
        const char *end = word_or_end(item, w);
        if (end[0] >= '0' && end[0] <= '9') {
            if (!parse_node(item, w, &f.other, error, capacity))
                return false;
            if (f.node == f.other)
                return item_error(item, error, capacity,
                                  "names node %u twice (expected two neighbours)",
                                  (unsigned)f.node);
            f.link = FAULT_LINK_PAIR;
        } else if (strlen(end) != 2 || !torus_geometry_link_from_name(end, &f.link)) {
            return item_error(item, error, capacity, "'%s' is not a link direction or a node "
                                                     "(expected x+, x-, y+ ... or a neighbour)",
                              cli_echo(end, echo));
        }
        w++;
        const char *state = word_or_end(item, w);
        if (strcmp(state, "on") == 0)
            f.kind = FAULT_LINK_ON;
        else if (strcmp(state, "off") != 0)
            return item_error(item, error, capacity, "'%s' after the link: expected off or on",
                              cli_echo(state, echo));
        w++;
        break;
    }
    case FAULT_CUT:
        if (!parse_plane(word_or_end(item, w), &f))
            return item_error(item, error, capacity,
                              "'%s' is not a plane (expected D=A|B, D one of x y z u v w and "
                              "B = A+1, e.g. x=3|4)",
                              cli_echo(word_or_end(item, w), echo));
        w++;
        if (strcmp(word_or_end(item, w), "except") == 0) {
            uint64_t keep = 0;
            w++;
            if (!cli_parse_u64(word_or_end(item, w), 0, UINT32_MAX - 1u, &keep))
                return item_error(item, error, capacity,
                                  "'%s' is not a number of cables to keep (expected e.g. "
                                  "'cut x=3|4 except 2 at 1s')",
                                  cli_echo(word_or_end(item, w), echo));
            f.keep = (uint32_t)keep;
            w++;
        }
        break;
    default: {
        const char *who = word_or_end(item, w);
        if (takes_group(f.kind) && w < item->words && strpbrk(who, "<=>") != NULL) {
            if (!parse_group(who, &f))
                return item_error(item, error, capacity,
                                  "'%s' is not a node or a group (expected a rank like 3, or "
                                  "coordinates like x>=4,y<2: x y z u v w or id, < <= = >= >, "
                                  "a number)",
                                  cli_echo(who, echo));
        } else if (!parse_node(item, w, &f.node, error, capacity)) {
            return false;
        }
        w++;
        break;
    }
    }
    if (strcmp(word_or_end(item, w), "at") != 0)
        return item_error(item, error, capacity,
                          "expected 'at TIME' or 'at iteration N' where '%s' is",
                          cli_echo(word_or_end(item, w), echo));
    w++;
    if (strcmp(word_or_end(item, w), "iteration") == 0) {
        uint64_t n = 0;
        w++;
        if (!cli_parse_u64(word_or_end(item, w), 1, UINT32_MAX, &n))
            return item_error(item, error, capacity, "'%s' is not an iteration (expected "
                                                     "a count in 1..4294967295)",
                              cli_echo(word_or_end(item, w), echo));
        f.iteration = (uint32_t)n;
    } else if (strcmp(word_or_end(item, w), "recovery") == 0) {
        /* "recovery", "recovery + D" or "recovery +D" */
        f.at_recovery = true;
        const char *next = w + 1 < item->words ? item->word[w + 1] : NULL;
        if (next != NULL && next[0] == '+') {
            w++;
            const char *delay = next + 1;
            if (*delay == '\0') {
                w++;
                delay = word_or_end(item, w);
            }
            if (w >= item->words || !cli_parse_time_ns(delay, true, &f.time_ns))
                return item_error(item, error, capacity,
                                  "'%s' is not a delay after the recovery (expected "
                                  CLI_TIME_EXPECTED ", e.g. 'kill 5 at recovery + 2ms')",
                                  cli_echo(delay, echo));
        } else if (next != NULL && strcmp(next, "for") != 0) {
            return item_error(item, error, capacity,
                              "'%s' after 'at recovery' (expected '+ D', 'for D' or the end, "
                              "e.g. 'kill 5 at recovery + 2ms')",
                              cli_echo(next, echo));
        }
    } else if (w >= item->words || !cli_parse_time_ns(item->word[w], true, &f.time_ns)) {
        return item_error(item, error, capacity, "'%s' is not a time (expected "
                                                 CLI_TIME_EXPECTED ", 0, iteration N or recovery)",
                          cli_echo(word_or_end(item, w), echo));
    }
    w++;
    if (w < item->words && strcmp(item->word[w], "for") == 0) {
        if (f.kind != FAULT_HANG && f.kind != FAULT_LINK_OFF && f.kind != FAULT_BLOCK &&
            f.kind != FAULT_CUT)
            return item_error(item, error, capacity,
                              "'for' applies to hang, link ... off, block and cut only");
        w++;
        if (w >= item->words || !cli_parse_time_ns(item->word[w], false, &f.duration_ns))
            return item_error(item, error, capacity, "'%s' is not a duration (expected "
                                                     CLI_TIME_EXPECTED ")",
                              cli_echo(word_or_end(item, w), echo));
        w++;
    } else if (f.kind == FAULT_BLOCK) {
        return item_error(item, error, capacity, "block needs 'for D' (expected e.g. "
                                                 "'block 2 3 at 1s for 1s')");
    }
    if (w < item->words)
        return item_error(item, error, capacity, "unexpected '%s' at the end",
                          cli_echo(item->word[w], echo));
    *out = f;
    return true;
}

bool fault_script_parse(const char *text, struct fault_script *script, char *error,
                        size_t capacity)
{
    memset(script, 0, sizeof *script);
    const char *c = text;
    for (;;) {
        size_t span = strcspn(c, ";\n#");
        const char *end = c + span;
        const char *begin = c;
        const char *stop = end;
        while (begin < stop && is_space(*begin))
            begin++;
        while (stop > begin && is_space(stop[-1]))
            stop--;
        if (begin < stop) {
            static struct item item;
            struct fault f;
            if (!split_item(begin, stop, &item, error, capacity) ||
                !parse_item(&item, &f, error, capacity)) {
                fault_script_free(script);
                return false;
            }
            if (!fault_script_add(script, &f)) {
                fault_script_free(script);
                snprintf(error, capacity, "out of memory");
                return false;
            }
        }
        if (*end == '#')
            end += strcspn(end, "\n"); /* a comment runs to the end of its line */
        if (*end == '\0')
            break;
        c = end + 1;
    }
    return true;
}

bool fault_script_read_file(const char *path, char **text, char *error, size_t capacity)
{
    char echo[CLI_ECHO_MAX + 4];
    *text = NULL;
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        snprintf(error, capacity, "%s: cannot be read (expected a fault script file)",
                 cli_echo(path, echo));
        return false;
    }
    size_t length = 0, room = 4096;
    char *buffer = malloc(room + 1);
    bool ok = buffer != NULL;
    while (ok) {
        size_t got = fread(buffer + length, 1, room - length, in);
        length += got;
        if (length < room)
            break;
        char *grown = room < (1u << 24) ? realloc(buffer, 2 * room + 1) : NULL;
        ok = grown != NULL;
        if (ok) {
            buffer = grown;
            room *= 2;
        }
    }
    ok = ok && !ferror(in);
    fclose(in);
    if (!ok) {
        free(buffer);
        snprintf(error, capacity, "%s: cannot be read (expected a fault script file under 16 MB)",
                 cli_echo(path, echo));
        return false;
    }
    buffer[length] = '\0';
    if (strlen(buffer) != length) {
        free(buffer);
        snprintf(error, capacity, "%s: holds a NUL byte (expected a text file)",
                 cli_echo(path, echo));
        return false;
    }
    *text = buffer;
    return true;
}

__attribute__((format(printf, 4, 5))) static bool fault_error(const struct fault *item,
                                                              char *error, size_t capacity,
                                                              const char *format, ...);
static bool fault_error(const struct fault *item, char *error, size_t capacity,
                        const char *format, ...)
{
    char text[FAULT_TEXT_MAX];
    fault_format(item, text, sizeof text);
    va_list arguments;
    va_start(arguments, format);
    quoted_error(text, error, capacity, format, arguments);
    va_end(arguments);
    return false;
}

static bool in_group(const struct torus_geometry *geometry, const struct fault *f, uint32_t rank)
{
    for (unsigned i = 0; i < f->select_count; i++) {
        const struct fault_predicate *p = &f->select[i];
        uint32_t v = p->dim < 0 ? rank : torus_geometry_coord(geometry, rank, (unsigned)p->dim);
        bool holds = p->op == FAULT_LT   ? v < p->value
                     : p->op == FAULT_LE ? v <= p->value
                     : p->op == FAULT_EQ ? v == p->value
                     : p->op == FAULT_GE ? v >= p->value
                                         : v > p->value;
        if (!holds)
            return false;
    }
    return true;
}

/* The cables a cut names: the nodes at its first plane (their D+ link). */
static bool on_cut_plane(const struct torus_geometry *geometry, const struct fault *f,
                         uint32_t rank)
{
    return torus_geometry_coord(geometry, rank, (unsigned)f->dim) == f->plane;
}

static bool check_group(const struct fault *f, const struct torus_geometry *geometry,
                        char *error, size_t capacity)
{
    for (unsigned i = 0; i < f->select_count; i++)
        if (f->select[i].dim >= (int)geometry->dims)
            return fault_error(f, error, capacity,
                               "the torus has no dimension %c (expected one of its %u, or id)",
                               dimension_letters[f->select[i].dim], geometry->dims);
    for (uint32_t rank = 0; rank < geometry->node_count; rank++)
        if (in_group(geometry, f, rank))
            return true;
    return fault_error(f, error, capacity, "the group holds no node of the torus (expected "
                                           "coordinates within it)");
}

static bool check_cut(const struct fault *f, const struct torus_geometry *geometry, char *error,
                      size_t capacity)
{
    if (f->dim >= (int)geometry->dims)
        return fault_error(f, error, capacity,
                           "the torus has no dimension %c (expected one of its %u)",
                           dimension_letters[f->dim], geometry->dims);
    uint32_t size = geometry->size[f->dim];
    bool next = f->plane < size && f->plane_next < size && size > 1 &&
                (f->plane + 1u == f->plane_next ||
                 (geometry->wraps[f->dim] && f->plane + 1u == size && f->plane_next == 0));
    if (!next)
        return fault_error(f, error, capacity,
                           "planes %" PRIu32 " and %" PRIu32 " are not neighbours in a dimension "
                           "of %" PRIu32 " (expected B = A+1, around the ring on a torus)",
                           f->plane, f->plane_next, size);
    uint32_t cables = geometry->node_count / size;
    if (f->keep >= cables)
        return fault_error(f, error, capacity,
                           "except %" PRIu32 " keeps every one of its %" PRIu32 " cables "
                           "(expected fewer)",
                           f->keep, cables);
    return true;
}

bool fault_script_check_torus(const struct fault_script *script,
                              const struct torus_geometry *geometry, char *error,
                              size_t capacity)
{
    uint32_t count = torus_geometry_node_count(geometry);
    for (size_t i = 0; i < script->count; i++) {
        const struct fault *f = &script->items[i];
        if (f->select_count != 0 && !check_group(f, geometry, error, capacity))
            return false;
        if (f->kind == FAULT_CUT && !check_cut(f, geometry, error, capacity))
            return false;
        bool pair = f->kind == FAULT_SUSPECT || f->kind == FAULT_BLOCK ||
                    ((f->kind == FAULT_LINK_OFF || f->kind == FAULT_LINK_ON) &&
                     f->link == FAULT_LINK_PAIR);
        bool single = f->kind != FAULT_PARTITION && f->kind != FAULT_HEAL &&
                      f->kind != FAULT_CUT && f->kind != FAULT_PING && f->select_count == 0;
        if (single && f->node >= count)
            return fault_error(f, error, capacity, "node %u does not exist (expected 0..%u)",
                               (unsigned)f->node, (unsigned)(count - 1u));
        if (pair && f->other >= count)
            return fault_error(f, error, capacity, "node %u does not exist (expected 0..%u)",
                               (unsigned)f->other, (unsigned)(count - 1u));
        if (f->kind == FAULT_LINK_OFF || f->kind == FAULT_LINK_ON) {
            if (pair && torus_geometry_distance(geometry, f->node, f->other) != 1)
                return fault_error(f, error, capacity,
                                   "nodes %u and %u are not torus neighbours (expected the "
                                   "two ends of one link)",
                                   (unsigned)f->node, (unsigned)f->other);
            if (!pair && torus_geometry_neighbour(geometry, f->node, f->link) == TORUS_RANK_NONE)
                return fault_error(f, error, capacity, "node %u has no link %s (expected one "
                                                       "of the torus's directions)",
                                   (unsigned)f->node, torus_geometry_link_name(f->link));
        }
        if (f->kind == FAULT_PARTITION) {
            if (f->dim >= (int)geometry->dims)
                return fault_error(f, error, capacity,
                                   "the torus has no dimension %c (expected one of its %u)",
                                   dimension_letters[f->dim], geometry->dims);
            uint32_t limit = f->dim < 0 ? count : geometry->size[f->dim];
            if (f->below >= limit)
                return fault_error(f, error, capacity,
                                   "%" PRIu32 " leaves nobody on the other side (expected "
                                   "0 < K < %" PRIu32 ")",
                                   f->below, limit);
        }
    }
    return true;
}

bool fault_script_expand(const struct fault_script *script, const struct torus_geometry *geometry,
                         struct fault_script *out, char *error, size_t capacity)
{
    memset(out, 0, sizeof *out);
    bool ok = true;
    for (size_t i = 0; i < script->count && ok; i++) {
        const struct fault *f = &script->items[i];
        if (f->select_count != 0) {
            for (uint32_t rank = 0; rank < geometry->node_count && ok; rank++) {
                if (!in_group(geometry, f, rank))
                    continue;
                struct fault one = *f;
                one.select_count = 0;
                one.node = rank;
                ok = fault_script_add(out, &one);
            }
        } else if (f->kind == FAULT_CUT) {
            uint32_t skipped = 0;
            for (uint32_t rank = 0; rank < geometry->node_count && ok; rank++) {
                if (!on_cut_plane(geometry, f, rank) || skipped++ < f->keep)
                    continue;
                struct fault cable = *f;
                cable.kind = FAULT_LINK_OFF;
                cable.node = rank;
                cable.link = torus_geometry_link((unsigned)f->dim, TORUS_DIRECTION_PLUS);
                cable.dim = 0;
                cable.plane = cable.plane_next = cable.keep = 0;
                ok = fault_script_add(out, &cable);
            }
        } else {
            ok = fault_script_add(out, f);
        }
    }
    if (!ok) {
        fault_script_free(out);
        snprintf(error, capacity, "out of memory");
    }
    return ok;
}

bool fault_script_write(FILE *out, const struct fault *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char text[FAULT_TEXT_MAX];
        fault_format(&items[i], text, sizeof text);
        if (fprintf(out, "%s\n", text) < 0)
            return false;
    }
    return fflush(out) == 0;
}
