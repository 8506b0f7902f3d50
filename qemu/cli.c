#include "qemu/cli.h"

#include <stdio.h>
#include <string.h>

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

#define NS_PER_MS 1000000ull
#define MAX_DURATION_NS (7ull * 24 * 3600 * 1000 * NS_PER_MS)

bool cli_parse_duration_ns(const char *text, uint64_t *out_ns)
{
    if (text == NULL)
        return false;
    size_t digits = strspn(text, "0123456789");
    if (digits == 0 || digits > 12)
        return false;
    char number[16];
    memcpy(number, text, digits);
    number[digits] = '\0';
    uint64_t value = 0;
    if (!cli_parse_u64(number, 0, UINT64_MAX, &value))
        return false;
    const char *unit = text + digits;
    uint64_t scale;
    if (strcmp(unit, "ms") == 0)
        scale = NS_PER_MS;
    else if (strcmp(unit, "s") == 0 || *unit == '\0')
        scale = 1000u * NS_PER_MS;
    else if (strcmp(unit, "m") == 0)
        scale = 60000u * NS_PER_MS;
    else
        return false;
    if (value == 0 || value > MAX_DURATION_NS / scale)
        return false;
    *out_ns = value * scale;
    return true;
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
