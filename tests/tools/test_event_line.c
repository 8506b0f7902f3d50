/* Event-line parser and JSON writer: what is accepted, what is refused and
 * counted as malformed, and the exact JSON produced. */
#include <stdlib.h>
#include <string.h>

#include "tools/event_json.h"
#include "tools/event_line.h"
#include "tests/check.h"

static struct event_line line;

static enum event_line_status parse(const char *text)
{
    return event_line_parse(text, strlen(text), &line, NULL);
}

static void test_valid_lines(void)
{
    CHECK(parse("tori node=3 event=view t_ns=1234 epoch=4 root=0 digest=9f3a "
                "reason=\"link x+ down, retries=8\"\r\n") == EVENT_LINE_OK);
    CHECK(line.node == 3 && line.t_ns == 1234 && strcmp(line.name, "view") == 0);
    CHECK(line.field_count == 4);
    CHECK(strcmp(event_line_get(&line, "digest"), "9f3a") == 0);
    CHECK(strcmp(event_line_get(&line, "reason"), "link x+ down, retries=8") == 0);
    CHECK(line.fields[3].quoted && !line.fields[0].quoted);
    uint64_t epoch = 0;
    CHECK(event_line_get_u64(&line, "epoch", &epoch) && epoch == 4);
    CHECK(!event_line_get_u64(&line, "digest", &epoch));
    CHECK(event_line_get(&line, "missing") == NULL);

    CHECK(parse("tori node=- event=boot t_ns=7 board=qemu-virt") == EVENT_LINE_OK);
    CHECK(line.node == -1 && line.field_count == 1);
    CHECK(parse("tori node=0 event=ready t_ns=0") == EVENT_LINE_OK);
    CHECK(line.field_count == 0);
    CHECK(parse("tori node=1 event=x t_ns=5 empty=\"\" a=b") == EVENT_LINE_OK);
    CHECK(strcmp(event_line_get(&line, "empty"), "") == 0);
}

static void test_plain_lines(void)
{
    CHECK(parse("") == EVENT_LINE_PLAIN);
    CHECK(parse("hello") == EVENT_LINE_PLAIN);
    CHECK(parse("tori: not an event") == EVENT_LINE_PLAIN);
    CHECK(parse("qemu-system-arm: terminating on signal 15") == EVENT_LINE_PLAIN);
    CHECK(parse("tori node") == EVENT_LINE_PLAIN);
}

static void test_malformed_lines(void)
{
    const char *bad[] = {
        "tori node=3 event=x",                       /* no t_ns */
        "tori node=3 t_ns=1 event=x",                /* wrong order */
        "tori node=a event=x t_ns=1",                /* node not a number */
        "tori node=3 event=x t_ns=1x",               /* t_ns not a number */
        "tori node=3 event=x t_ns=1 k=\"open",       /* quote not closed */
        "tori node=3 event=x t_ns=1 k=\"a\"b",       /* text after the quote */
        "tori node=3 event=x t_ns=1 k=a\"b",         /* quote inside a token */
        "tori node=3 event=x t_ns=1 k=",             /* empty value */
        "tori node=3 event=x t_ns=1 k",              /* no = */
        "tori node=3 event=x t_ns=1 =v",             /* no key */
        "tori node=3 event=x t_ns=1 k=1 k=2",        /* key twice */
        "tori node=3 event=x t_ns=1 node=4",         /* node twice */
        "tori node=3 event=x t_ns=1 k=a\tb",         /* control character */
        "tori node=3 event=x t_ns=1 k=\xc3\xa9",     /* not ASCII */
        "tori node=3 event=\"x\" t_ns=1",            /* quoted name */
        "tori node=3 event=x t_ns=99999999999999999999", /* t_ns overflows */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *reason = NULL;
        enum event_line_status status =
            event_line_parse(bad[i], strlen(bad[i]), &line, &reason);
        if (status != EVENT_LINE_MALFORMED)
            fprintf(stderr, "accepted: %s\n", bad[i]);
        CHECK(status == EVENT_LINE_MALFORMED);
        CHECK(reason != NULL);
    }
    /* Too long, and too many fields. */
    char *longer = malloc(EVENT_LINE_MAX + 64);
    strcpy(longer, "tori node=1 event=x t_ns=1 k=");
    size_t n = strlen(longer);
    memset(longer + n, 'a', EVENT_LINE_MAX);
    longer[n + EVENT_LINE_MAX] = '\0';
    CHECK(parse(longer) == EVENT_LINE_MALFORMED);
    strcpy(longer, "tori node=1 event=x t_ns=1");
    for (unsigned i = 0; i <= EVENT_LINE_MAX_FIELDS; i++)
        sprintf(longer + strlen(longer), " k%u=1", i);
    CHECK(parse(longer) == EVENT_LINE_MALFORMED);
    free(longer);
}

static void test_json(void)
{
    char json[EVENT_JSON_MAX];
    CHECK(parse("tori node=- event=view t_ns=12 epoch=4 rtt=-5 ratio=1.25 hex=0x1f "
                "octal=007 quoted=\"5\" path=a\\b emu_ns=1 why=\"a 'b' c\"") ==
          EVENT_LINE_OK);
    size_t n = event_json_format(&line, 6, 99, json, sizeof json);
    const char *expected =
        "{\"event\":\"view\",\"node\":6,\"t_ns\":12,\"emu_ns\":99,\"epoch\":4,"
        "\"rtt\":-5,\"ratio\":1.25,\"hex\":\"0x1f\",\"octal\":\"007\",\"quoted\":\"5\","
        "\"path\":\"a\\\\b\",\"why\":\"a 'b' c\"}";
    CHECK(n == strlen(expected));
    CHECK(strcmp(json, expected) == 0);
    if (strcmp(json, expected) != 0)
        fprintf(stderr, "got:      %s\nexpected: %s\n", json, expected);
    /* Too small: nothing half-written. */
    CHECK(event_json_format(&line, 6, 99, json, 20) == 0 && json[0] == '\0');

    CHECK(event_json_is_number("0") && event_json_is_number("-12") &&
          event_json_is_number("1.5e3") && event_json_is_number("2E-2"));
    CHECK(!event_json_is_number("") && !event_json_is_number("-") &&
          !event_json_is_number("01") && !event_json_is_number("1.") &&
          !event_json_is_number("1e") && !event_json_is_number("x1") &&
          !event_json_is_number("nan") && !event_json_is_number("1_000"));
}

int main(void)
{
    test_valid_lines();
    test_plain_lines();
    test_malformed_lines();
    test_json();
    return check_report("emu.event_line");
}
