#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

#include "net/torus/geometry.h"

bool cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    if (text == NULL || *text == '\0')
        return false;
    uint64_t value = 0;
    for (const char *c = text; *c != '\0'; c++) {
        if (*c < '0' || *c > '9')
            return false;
        unsigned digit = (unsigned)(*c - '0');
        if (value > (UINT64_MAX - digit) / 10u)
            return false;
        value = value * 10u + digit;
    }
    if (value < min || value > max)
        return false;
    *out = value;
    return true;
}

#define NS_PER_S 1000000000ull
#define MAX_TIME_NS (7ull * 24 * 3600 * NS_PER_S)

/* At most max_digits decimal digits; *scale is 10^digits. */
static bool take_digits(const char **cursor, size_t max_digits, uint64_t *value,
                        uint64_t *scale)
{
    size_t digits = strspn(*cursor, "0123456789");
    if (digits == 0 || digits > max_digits)
        return false;
    *value = 0;
    *scale = 1;
    for (size_t i = 0; i < digits; i++) {
        *value = *value * 10u + (uint64_t)((*cursor)[i] - '0');
        *scale *= 10u;
    }
    *cursor += digits;
    return true;
}

bool cli_parse_time_ns(const char *text, bool allow_zero, uint64_t *out_ns)
{
    if (text == NULL)
        return false;
    if (strcmp(text, "0") == 0) {
        if (allow_zero)
            *out_ns = 0;
        return allow_zero;
    }
    const char *c = text;
    uint64_t whole = 0, fraction = 0, fraction_scale = 1, whole_scale = 0;
    if (!take_digits(&c, 18, &whole, &whole_scale))
        return false;
    if (*c == '.') {
        c++;
        if (!take_digits(&c, 9, &fraction, &fraction_scale))
            return false;
    }
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"ns", 1u}, {"us", 1000u}, {"ms", 1000000u}, {"s", NS_PER_S},
                 {"m", 60u * NS_PER_S}};
    uint64_t unit = 0;
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        if (strcmp(c, units[u].name) == 0)
            unit = units[u].ns;
    if (unit == 0 || whole > MAX_TIME_NS / unit)
        return false;
    /*
     * fraction x unit / fraction_scale, in whole nanoseconds ("1.5ns" is
     * refused), without overflow: fraction < fraction_scale <= 10^9.
     */
    uint64_t quotient = unit / fraction_scale, remainder = unit % fraction_scale;
    if (fraction * remainder % fraction_scale != 0)
        return false;
    uint64_t ns = whole * unit + fraction * quotient + fraction * remainder / fraction_scale;
    if (ns > MAX_TIME_NS || (ns == 0 && !allow_zero))
        return false;
    *out_ns = ns;
    return true;
}

const char *cli_format_time(uint64_t ns, char out[CLI_TIME_TEXT_MAX])
{
    static const struct {
        uint64_t ns;
        const char *name;
    } units[] = {{NS_PER_S, "s"}, {1000000u, "ms"}, {1000u, "us"}, {1u, "ns"}};
    if (ns == 0)
        return "0";
    size_t u = 0;
    while (ns % units[u].ns != 0)
        u++;
    snprintf(out, CLI_TIME_TEXT_MAX, "%llu%s", (unsigned long long)(ns / units[u].ns),
             units[u].name);
    return out;
}

static const char dimension_letters[] = "xyzuvw";

bool cli_parse_mesh(const char *spec, unsigned dims, uint8_t *mask, char *error,
                    size_t capacity)
{
    char letters[8];
    unsigned n = dims < 6 ? dims : 6;
    memcpy(letters, dimension_letters, n);
    letters[n] = '\0';
    if (strcmp(spec, "all") == 0) {
        *mask = (uint8_t)((1u << dims) - 1u);
        return true;
    }
    if (strcmp(spec, "none") == 0) {
        *mask = 0;
        return true;
    }
    uint8_t result = 0;
    const char *c = spec;
    for (;;) {
        const char *found = *c != '\0' ? strchr(letters, *c) : NULL;
        if (found == NULL || (c[1] != ',' && c[1] != '\0')) {
            snprintf(error, capacity,
                     "'%.40s' is not a mesh spec (expected all, none or "
                     "dimension letters from '%s' separated by commas, like x,z)",
                     spec, letters);
            return false;
        }
        unsigned dim = (unsigned)(found - letters);
        if ((result >> dim) & 1u) {
            snprintf(error, capacity, "'%.40s' names dimension %c twice", spec, *c);
            return false;
        }
        result = (uint8_t)(result | (1u << dim));
        if (c[1] == '\0')
            break;
        c += 2;
    }
    *mask = result;
    return true;
}

int cli_take_value(int argc, char **argv, int *index, const char *name,
                   const char **value)
{
    const char *arg = argv[*index];
    size_t length = strlen(name);
    if (strncmp(arg, name, length) != 0)
        return 0;
    if (arg[length] == '=') {
        *value = arg + length + 1;
        return 1;
    }
    if (arg[length] != '\0')
        return 0;
    if (*index + 1 >= argc)
        return -1;
    *index += 1;
    *value = argv[*index];
    return 1;
}

bool cli_is_flag(const char *arg, const char *name)
{
    return strcmp(arg, name) == 0;
}

const char *cli_echo(const char *text, char buffer[CLI_ECHO_MAX + 4])
{
    size_t length = strlen(text);
    if (length <= CLI_ECHO_MAX)
        return text;
    memcpy(buffer, text, CLI_ECHO_MAX);
    memcpy(buffer + CLI_ECHO_MAX, "...", 4);
    return buffer;
}

/* The value of a "--name" / "--name=VALUE" option: 1 flag, 2 value, 0 neither. */
static int take_flag_or_equals(const char *arg, const char *name, const char **value)
{
    if (strcmp(arg, name) == 0)
        return 1;
    size_t length = strlen(name);
    if (strncmp(arg, name, length) == 0 && arg[length] == '=') {
        *value = arg + length + 1;
        return 2;
    }
    return 0;
}

/* Matches argv[*index] against one option: 1 taken, 0 not this one, -1 error. */
static int scan_one(int argc, char **argv, int *index, const struct cli_option *option,
                    char *error, size_t capacity)
{
    const char *arg = argv[*index];
    const char *value = NULL;
    int found;
    if (option->value == NULL) {
        found = cli_is_flag(arg, option->name) ? 1 : 0;
    } else if (option->flag != NULL) {
        found = take_flag_or_equals(arg, option->name, &value);
    } else {
        found = cli_take_value(argc, argv, index, option->name, &value);
        if (found < 0) {
            snprintf(error, capacity, "%s needs a value (see --help)", option->name);
            return -1;
        }
        found = found > 0 ? 2 : 0;
    }
    if (found == 0)
        return 0;
    if (option->value != NULL &&
        (*option->value != NULL || (option->flag != NULL && *option->flag))) {
        snprintf(error, capacity, "%s is given twice (expected it once)", option->name);
        return -1;
    }
    if (found == 1)
        *option->flag = true;
    else
        *option->value = value;
    return 1;
}

enum cli_scan_result cli_scan(int argc, char **argv, const struct cli_option *options,
                              size_t count, char *error, size_t capacity)
{
    for (int i = 1; i < argc; i++) {
        if (cli_is_flag(argv[i], "--help") || cli_is_flag(argv[i], "-h"))
            return CLI_SCAN_HELP;
        int matched = 0;
        for (size_t o = 0; o < count && matched == 0; o++) {
            matched = scan_one(argc, argv, &i, &options[o], error, capacity);
            if (matched < 0)
                return CLI_SCAN_ERROR;
        }
        if (matched == 0) {
            char echo[CLI_ECHO_MAX + 4];
            snprintf(error, capacity,
                     "unknown option '%s' (expected one of the options in --help)",
                     cli_echo(argv[i], echo));
            return CLI_SCAN_ERROR;
        }
    }
    return CLI_SCAN_OK;
}

bool cli_invalid(char *error, size_t capacity, const char *option, const char *value,
                 const char *expected)
{
    char echo[CLI_ECHO_MAX + 4];
    snprintf(error, capacity, "%s '%s' is invalid (expected %s)", option,
             cli_echo(value, echo), expected);
    return false;
}

bool cli_parse_u64_option(const char *option, const char *value, uint64_t min,
                          uint64_t max, uint64_t *out, char *error, size_t capacity)
{
    if (cli_parse_u64(value, min, max, out))
        return true;
    char expected[64];
    snprintf(expected, sizeof expected, "a whole number in %llu..%llu",
             (unsigned long long)min, (unsigned long long)max);
    return cli_invalid(error, capacity, option, value, expected);
}

bool cli_parse_unsigned_option(const char *option, const char *value, unsigned min,
                               unsigned max, unsigned *out, char *error, size_t capacity)
{
    uint64_t number = 0;
    if (!cli_parse_u64_option(option, value, min, max, &number, error, capacity))
        return false;
    *out = (unsigned)number;
    return true;
}

bool cli_parse_unsigned_options(const struct cli_unsigned_option *options, size_t count,
                                char *error, size_t capacity)
{
    for (size_t i = 0; i < count; i++) {
        const struct cli_unsigned_option *o = &options[i];
        if (o->value != NULL &&
            !cli_parse_unsigned_option(o->name, o->value, o->min, o->max, o->out, error,
                                       capacity))
            return false;
    }
    return true;
}

bool cli_parse_dims(const char *option, const char *text, unsigned *dims,
                    uint32_t size[CONFIG_MAX_DIMS], char *error, size_t capacity)
{
    struct torus_geometry_error geometry_error;
    if (torus_geometry_parse_dims(text, dims, size, &geometry_error) != TORUS_GEOMETRY_OK) {
        char reason[160];
        char echo[CLI_ECHO_MAX + 4];
        torus_geometry_format_error(&geometry_error, reason, sizeof reason);
        snprintf(error, capacity, "%s '%s' is invalid: %s", option, cli_echo(text, echo),
                 reason);
        return false;
    }
    for (unsigned d = 0; d < *dims; d++) {
        if (size[d] > 65535) {
            snprintf(error, capacity, "%s: dimension %c has size %u (expected at most 65535)",
                     option, dimension_letters[d], (unsigned)size[d]);
            return false;
        }
    }
    return true;
}

/* Longer than any line the tools write (an event's JSON is at most 3 KiB). */
#define WHOLE_LINE_BUFFER (64u * 1024u)

void cli_whole_lines(void)
{
    static char out_buffer[WHOLE_LINE_BUFFER], error_buffer[WHOLE_LINE_BUFFER];
    setvbuf(stdout, out_buffer, _IOLBF, sizeof out_buffer);
    setvbuf(stderr, error_buffer, _IOLBF, sizeof error_buffer);
}
