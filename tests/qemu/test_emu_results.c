/* Fault records: events are attributed to the right faults (first
 * detection naming the node after its injection, first stable, the node's
 * joined/expelled), a group closes with its check, and the JSON record and
 * the table say what was measured. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "qemu/faults/emu_results.h"
#include "tests/check.h"

static struct event_line line;

static void feed(struct emu_results *results, uint32_t rank, const char *text, uint64_t now)
{
    CHECK(event_line_parse(text, strlen(text), &line, NULL) == EVENT_LINE_OK);
    emu_results_on_event(results, rank, &line, now);
}

static char *read_all(FILE *file)
{
    static char text[16384];
    rewind(file);
    size_t n = fread(text, 1, sizeof text - 1, file);
    text[n] = '\0';
    return text;
}

int main(void)
{
    struct emu_results results;
    CHECK(emu_results_init(&results, 8));
    results.one_hop_ns = 100000.0;
    results.ocp_ns = 50.0;
    struct emu_action kill;
    memset(&kill, 0, sizeof kill);
    kill.kind = EMU_ACTION_KILL;
    kill.node = 7;
    emu_action_set_text(&kill, "kill 7 at 1s");

    /* Before the fault: nothing is attributed. */
    feed(&results, 1, "tori node=1 event=failure-detected t_ns=1 who=7 detector=1 "
                      "detect_ns=5 cause=heartbeat", 900);
    struct emu_fault_record *r = emu_results_add_fault(&results, &kill, 1000, 1);
    CHECK(r != NULL && r->index == 1 && r->injected && !r->detected);
    CHECK(emu_results_touches(&results, 7) && !emu_results_touches(&results, 3));
    feed(&results, 2, "tori node=2 event=failure-detected t_ns=1 who=5 detector=2 "
                      "detect_ns=5 cause=probe", 1100);
    CHECK(!r->detected);
    feed(&results, 3, "tori node=3 event=failure-detected t_ns=1 who=7 detector=3 "
                      "detect_ns=50000000 cause=heartbeat", 1200);
    feed(&results, 1, "tori node=1 event=failure-detected t_ns=1 who=7 detector=1 "
                      "detect_ns=1 cause=report", 1300);
    CHECK(r->detected && r->detected_ns == 1200 && r->detector == 3);
    CHECK(r->node_detect_ns == 50000000ull && strcmp(r->cause, "heartbeat") == 0);
    /* Issue 15: the root's decision for the node (the first one), quarantine included. */
    feed(&results, 0, "tori node=0 event=recovery-decision t_ns=1 who=7 model=repeated "
                      "action=migrate epoch=9 quarantined=true", 1350);
    feed(&results, 1, "tori node=1 event=recovery-decision t_ns=1 who=7 model=physical "
                      "action=ignore epoch=10", 1360);
    CHECK(r->decided && strcmp(r->decision_model, "repeated") == 0 &&
          strcmp(r->decision_action, "migrate") == 0 && r->quarantined);
    feed(&results, 0, "tori node=0 event=view t_ns=1 epoch=9 root=0 live=7 "
                      "digest=0x5c77d99e64418d7b ocp_ns=3000", 1400);
    /* O_cp for the model: the median of the nodes' install times of the
     * final view (epoch 9), not of an older one, else the launcher's. */
    feed(&results, 1, "tori node=1 event=view t_ns=1 epoch=9 root=0 live=7 "
                      "digest=0x5c77d99e64418d7b ocp_ns=1000", 1410);
    feed(&results, 2, "tori node=2 event=view t_ns=1 epoch=9 root=0 live=7 "
                      "digest=0x5c77d99e64418d7b ocp_ns=2000", 1420);
    feed(&results, 3, "tori node=3 event=view t_ns=1 epoch=8 root=0 live=8 "
                      "digest=0x5c77d99e64418d7b ocp_ns=99999", 1430);
    unsigned samples = 0;
    CHECK(emu_results_group_ocp_ns(&results, 9, &samples) == 2000.0 && samples == 3);
    CHECK(emu_results_group_ocp_ns(&results, 12, &samples) == 50.0 && samples == 0);
    feed(&results, 0, "tori node=0 event=stable t_ns=1 epoch=9 ts_ns=777 messages=12 "
                      "episode_messages=14 detector_messages=2 rounds=1 live=7 levels=3", 1500);
    feed(&results, 0, "tori node=0 event=stable t_ns=1 epoch=10 ts_ns=999 messages=1 "
                      "episode_messages=1 detector_messages=0 rounds=1 live=7 levels=3", 1600);
    CHECK(r->stable && r->ts_ns == 777 && r->stable_epoch == 9 && r->stables == 2);
    CHECK(r->messages == 12 && r->levels == 3 && r->stable_ns == 1500);

    struct emu_check_record check;
    memset(&check, 0, sizeof check);
    check.group = 1;
    check.settled = true;
    check.checked_ns = 2000;
    check.agreement.passed = true;
    check.agreement.epoch = 9;
    check.agreement.live = 7;
    check.agreement.members = 7;
    check.tree.model.levels = 3;
    check.tree.model.hop_sum = 5;
    check.ocp_ns = 2000.0;
    check.ocp_samples = 3;
    check.tree.model.distance_ns = 1000.0;
    check.tree.model.base_ns = 800.0;
    FILE *json = tmpfile();
    CHECK(json != NULL);
    const struct emu_check_record *closed = emu_results_close_group(&results, &check, json, NULL);
    CHECK(closed != NULL && closed->first == 0 && closed->last == 1);
    char *text = read_all(json);
    CHECK_CONTAINS(text, "{\"record\":\"fault\",\"index\":1,\"action\":\"kill\",\"node\":7,");
    CHECK_CONTAINS(text, "\"text\":\"kill 7 at 1s\",\"injected_ns\":1000,\"injected\":true");
    CHECK_CONTAINS(text, "\"detection\":{\"at_ns\":1200,\"after_ns\":200,\"detector\":3,"
                         "\"cause\":\"heartbeat\"");
    CHECK_CONTAINS(text, "\"decision\":{\"model\":\"repeated\",\"action\":\"migrate\","
                         "\"quarantined\":true}");
    CHECK_CONTAINS(text, "\"ts_ns\":777,\"messages\":12");
    CHECK_CONTAINS(text, "\"recovery_ns\":500");
    CHECK_CONTAINS(text, "\"ocp_ns\":2000.0,\"ocp_samples\":3,\"launcher_ocp_ns\":50.0");
    CHECK_CONTAINS(text, "\"ratio\":0.777");
    CHECK_CONTAINS(text, "\"views\":[{\"node\":0,\"epoch\":9,\"digest\":\"0x5c77d99e64418d7b\"");
    CHECK_CONTAINS(text, "\"agreement\":{\"result\":\"pass\",\"settled\":true");
    CHECK(strchr(text, '\n') == text + strlen(text) - 1); /* one line */

    /* A second group: a join whose node rejoins, and a failed check. */
    struct emu_action join = kill;
    join.kind = EMU_ACTION_JOIN;
    emu_action_set_text(&join, "join 7 at 3s \"quoted\"");
    r = emu_results_add_fault(&results, &join, 3000, 2);
    CHECK(!emu_results_touches(&results, 3) && emu_results_touches(&results, 7));
    feed(&results, 7, "tori node=7 event=joined t_ns=1 epoch=11 root=0", 3300);
    feed(&results, 6, "tori node=6 event=expelled t_ns=1 epoch=11 by=0", 3400);
    CHECK(r->rejoined && r->rejoined_ns == 3300 && !r->expelled);
    check.group = 2;
    check.agreement.passed = false;
    snprintf(check.agreement.reason, sizeof check.agreement.reason, "nodes 1 and 3 disagree");
    rewind(json);
    CHECK(ftruncate(fileno(json), 0) == 0);
    CHECK(emu_results_close_group(&results, &check, json, NULL) != NULL);
    text = read_all(json);
    CHECK_CONTAINS(text, "\"text\":\"join 7 at 3s \\\"quoted\\\"\"");
    CHECK_CONTAINS(text, "\"rejoined_ns\":300,\"expelled_ns\":null");
    CHECK_CONTAINS(text, "\"detection\":null,\"decision\":null,\"stable\":null,"
                         "\"recovery_ns\":null");
    CHECK_CONTAINS(text, "\"result\":\"fail\"");
    CHECK_CONTAINS(text, "\"reason\":\"nodes 1 and 3 disagree\"");
    CHECK(results.failed_checks == 1 && results.check_count == 2);

    FILE *table = tmpfile();
    emu_results_print_table(&results, table);
    text = read_all(table);
    CHECK_CONTAINS(text, "L = 0.100 ms one hop");
    CHECK_CONTAINS(text, "kill 7");
    CHECK_CONTAINS(text, "+0.000ms repeated/migrate!   0.001ms   0.001ms   0.78");
    CHECK_CONTAINS(text, "pass: epoch 9, 7 live");
    CHECK_CONTAINS(text, "FAIL: nodes 1 and 3 disagree");
    CHECK_CONTAINS(text, "2 faults, 2 agreement checks, 1 failed");
    FILE *summary = tmpfile();
    emu_results_write_summary(&results, summary);
    text = read_all(summary);
    CHECK_CONTAINS(text, "{\"record\":\"summary\",\"faults\":2,\"injection_errors\":0,"
                         "\"checks\":2,\"failed_checks\":1");
    CHECK(emu_results_median(&results, EMU_RESULTS_TS) == 777.0);
    fclose(json);
    fclose(table);
    fclose(summary);
    emu_results_free(&results);
    return check_report("emu.results");
}
