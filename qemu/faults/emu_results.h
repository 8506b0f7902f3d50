/*
 * What a fault run measured: one record per fault, one agreement check per
 * group of faults (faults injected before the torus settled share a check),
 * written as JSON lines (<out>/faults.jsonl, and stdout under --json) and
 * as a closing table.
 *
 * A fault record holds, on the launcher's clock counted from the start of
 * the job (when every node was told `start`):
 *   - when it was injected;
 *   - the first `failure-detected` naming its node after that (detection);
 *   - the first `stable` after it (T_s, messages, rounds, levels, at the
 *     root that completed the view), and the time from the injection to it;
 *   - its node's `joined` / `expelled` / `left` (its own, a leave's end);
 *   - the view each live node installed last since the injection;
 *   - the distance-model prediction for the expected view after its group,
 *     and T_s / prediction;
 *   - its group's agreement check.
 */
#ifndef QEMU_FAULTS_EMU_RESULTS_H
#define QEMU_FAULTS_EMU_RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "qemu/faults/emu_agree.h"
#include "qemu/faults/emu_inject.h"
#include "qemu/faults/emu_model.h"
#include "tools/event_line.h"
#include "tools/ts_model.h"

struct emu_fault_record {
    unsigned index;           /* from 1 */
    struct emu_action action;
    uint64_t injected_ns;
    uint32_t iteration;       /* timed by iteration: the progress seen when it fired */
    bool injected;            /* false: the launcher could not do it (error) */
    char error[200];
    unsigned group;           /* its agreement check, from 1 */

    bool detected;
    uint64_t detected_ns;
    uint32_t detector;
    char cause[16];
    uint64_t node_detect_ns;  /* the detector's own detect_ns */
    char model[12];           /* the detection's fault model (lib/recovery.h), or "" */

    bool decided;             /* a recovery-decision named the node (issue 15) */
    char decision_model[12], decision_action[12];
    bool quarantined;

    bool stable;
    uint64_t stable_ns;       /* when the launcher read it */
    uint32_t stable_root;     /* the node that printed it */
    uint64_t stable_epoch, ts_ns, messages, episode_messages, rounds, stable_live, levels;
    uint64_t stable_node_ns;  /* the root's own clock (t_ns) when it printed it */
    unsigned stables;         /* stable events until its check */

    bool rejoined;
    uint64_t rejoined_ns;
    bool expelled;
    uint64_t expelled_ns;
    bool left;                /* its node said `left` of itself (a graceful leave) */
    uint64_t left_ns;
    bool pinged;              /* `ping all`: its ordered pairs of running nodes */
    uint64_t ping_pairs, ping_answered;
};

struct emu_check_record {
    unsigned group;
    unsigned first, last;     /* indices into the fault records */
    uint64_t begin_ns;        /* first injection of the group */
    uint64_t checked_ns;
    bool settled;             /* quiet for the settle period (else timed out) */
    unsigned detections;      /* failure-detected events in the group */
    unsigned false_suspicions; /* ... naming a node no fault of the group touched */
    struct emu_agreement agreement;
    struct emu_model_tree tree; /* the expected view */
    double ocp_ns;            /* O_cp of the model: see emu_results_group_ocp_ns */
    unsigned ocp_samples;     /* views that reported it; 0: the launcher's figure */
    /* Where T_s goes (nodes on one clock only, see emu_results_level_installs):
     * [d] the latest install of the stable view by a member at depth d, from
     * the start of the root's round; level_count 0 when not known. */
    unsigned level_count;
    double level_install_ns[TS_MODEL_MAX_LEVELS];
};

struct emu_results {
    uint32_t count;           /* nodes */
    struct emu_fault_record *faults;
    unsigned fault_count, fault_capacity;
    struct emu_check_record *checks;
    unsigned check_count, check_capacity;
    struct emu_action *not_fired;  /* scheduled, never due before the run ended */
    unsigned not_fired_count, not_fired_capacity;
    /* Each node's last view event (ocp_ns: its own time to install it). */
    bool *has_view;
    uint64_t *view_epoch, *view_digest, *view_ns, *view_ocp_ns;
    uint64_t *view_node_ns;   /* the node's own clock (t_ns) at that view */
    unsigned open_first;      /* records of the group not checked yet */

    double one_hop_ns;        /* L */
    unsigned latency_samples;
    struct ts_fan_latency fans; /* L(k) for the contention model (count 0: none) */
    double ocp_ns;            /* O_cp on the launcher's CPU: the fallback */
    uint64_t job_start_ns;    /* on the launcher clock of events.jsonl (emu_ns) */
    unsigned failed_checks;
};

bool emu_results_init(struct emu_results *results, uint32_t count);
void emu_results_free(struct emu_results *results);

/* A new fault of the open group (opened by the first one); NULL when out of memory. */
struct emu_fault_record *emu_results_add_fault(struct emu_results *results,
                                               const struct emu_action *action,
                                               uint64_t injected_ns, unsigned group);

/*
 * A scheduled action the run ended before (the job was over first); its
 * record goes to each non-NULL stream.  False when out of memory.
 */
bool emu_results_add_not_fired(struct emu_results *results, const struct emu_action *action,
                               FILE *json_a, FILE *json_b);

/*
 * O_cp for a group's model: the median of the times the nodes reported for
 * installing the group's final view (epoch), as the paper measures O_cp on
 * the target; *samples says how many (0: none reported, the launcher's own
 * figure is returned).
 */
double emu_results_group_ocp_ns(const struct emu_results *results, uint64_t epoch,
                                unsigned *samples);

/* The median of values[0..count) (sorted in place); 0 when count is 0. */
double emu_results_median_of(double *values, unsigned count);

/* Attributes a node event read at now_ns to the open records. */
void emu_results_on_event(struct emu_results *results, uint32_t rank,
                          const struct event_line *line, uint64_t now_ns);

/* True when a fault of the open group touched node (for false suspicions). */
bool emu_results_touches(const struct emu_results *results, uint32_t node);

/*
 * Closes the open group with its check; writes its records (JSON to each
 * non-NULL stream) and returns the check record.
 */
struct emu_check_record *emu_results_close_group(struct emu_results *results,
                                                 const struct emu_check_record *check,
                                                 FILE *json_a, FILE *json_b);

/* The closing table. */
/*
 * Fills check's level_install_ns from the nodes' own view times for the
 * group's stable epoch, depth_by_id[id] each member's depth in the expected
 * tree (UINT8_MAX: none).  Call only when every node's t_ns is on one clock
 * (host processes of one machine).
 */
void emu_results_level_installs(const struct emu_results *results, struct emu_check_record *check,
                                const uint8_t *depth_by_id);

void emu_results_print_table(const struct emu_results *results, FILE *out);

/* The closing JSON record (one line). */
void emu_results_write_summary(const struct emu_results *results, FILE *out);

/* Median of the T_s / detection / ratio columns (0 when none). */
double emu_results_median(const struct emu_results *results, int column);
enum { EMU_RESULTS_TS = 0, EMU_RESULTS_DETECTION = 1, EMU_RESULTS_RATIO = 2,
       EMU_RESULTS_RECOVERY = 3 };

#endif /* QEMU_FAULTS_EMU_RESULTS_H */
