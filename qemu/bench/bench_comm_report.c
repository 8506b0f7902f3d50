/* tori-bench-comm's tables, ratios and JSON record (see bench_comm.h). */
#include <inttypes.h>
#include <math.h>

#include "qemu/bench/bench_comm.h"

/* ---- ratios ---- */

enum ratio_kind { SMALL_RTT, BANDWIDTH, ALLREDUCE, BARRIER, RATIO_KINDS };

static const struct {
    const char *key;      /* JSON */
    const char *title;    /* table */
    const char *unit;     /* of the two figures */
    double target;
    bool at_least;        /* else: at most */
    enum bench_comm_kind kind;
} ratio_table[RATIO_KINDS] = {
    {"small_rtt_over_raw_rtt", "0 B ping-pong RTT / raw frame RTT", "us", 1.2, false,
     BENCH_COMM_PAIR},
    {"bandwidth_over_raw_flood", "64 KiB ping-pong bandwidth / raw flood", "MB/s", 0.8, true,
     BENCH_COMM_PAIR},
    {"allreduce_over_model", "allreduce / model 2 L x hops", "us", 1.5, false,
     BENCH_COMM_COLLECTIVE},
    {"barrier_over_model", "barrier / model 2 L x hops", "us", 1.5, false,
     BENCH_COMM_COLLECTIVE},
};

/* The two figures of a ratio, in its unit; false when the run lacks them. */
static bool ratio_terms(const struct bench_comm_run *run, enum ratio_kind kind,
                        double *numerator, double *denominator)
{
    if (run->kind != ratio_table[kind].kind || run->status != 0)
        return false;
    switch (kind) {
    case SMALL_RTT:
        if (run->sizes == 0 || run->size[0].bytes != 0)
            return false;
        *numerator = (double)run->size[0].rtt_ns / 1e3;
        *denominator = (double)bench_comm_raw_rtt_ns(run) / 1e3;
        break;
    case BANDWIDTH:
        *numerator = bench_comm_pingpong_bandwidth(run) / 1e6;
        *denominator = bench_comm_flood_bandwidth(run) / 1e6;
        break;
    case ALLREDUCE:
        *numerator = (double)run->allreduce_ns / 1e3;
        *denominator = bench_comm_model_ns(run) / 1e3;
        break;
    case BARRIER:
        *numerator = (double)run->barrier_ns / 1e3;
        *denominator = bench_comm_model_ns(run) / 1e3;
        break;
    default:
        return false;
    }
    return *denominator > 0.0;
}

static bool ratio_met(enum ratio_kind kind, double value)
{
    return ratio_table[kind].at_least ? value >= ratio_table[kind].target
                                      : value <= ratio_table[kind].target;
}

/* ---- table ---- */

static void print_pair(FILE *out, const struct bench_comm_run *run)
{
    fprintf(out, "\n%s: 1-D torus of %u nodes, ranks 0 and 1 (neighbours)\n", run->name,
            run->nodes);
    fprintf(out, "  %8s  %8s  %12s  %10s\n", "bytes", "rounds", "rtt median", "MB/s");
    for (unsigned i = 0; i < run->sizes; i++) {
        const struct bench_comm_size *s = &run->size[i];
        double rate = bench_link_ratio(2.0 * (double)s->bytes * 1e3, (double)s->rtt_ns);
        fprintf(out, "  %8" PRIu64 "  %8" PRIu64 "  %9.1f us  %10.2f\n", s->bytes, s->rounds,
                (double)s->rtt_ns / 1e3, rate);
    }
    const struct bench_link_spread *sp = &run->link.hop[0].spread;
    fprintf(out, "  raw frame RTT (ping 1): median %.1f us, p10 %.1f, p90 %.1f (%" PRIu64
                 " pings, %" PRIu64 " failed)\n",
            (double)sp->median / 1e3, (double)sp->p10 / 1e3, (double)sp->p90 / 1e3, sp->count,
            run->link.hop[0].failed);
    if (run->link.floods > 0) {
        const struct bench_link_flood *f = &run->link.flood[0];
        fprintf(out, "  raw flood (flood 1): %" PRIu64 " of %" PRIu64 " frames of %" PRIu64
                     " bytes delivered in %.3f ms: %.2f MB/s\n",
                f->delivered, f->sent, f->size, (double)f->span_ns / 1e6,
                bench_comm_flood_bandwidth(run) / 1e6);
    }
}

static void print_collective(FILE *out, const struct bench_comm_run *run)
{
    fprintf(out,
            "\n%s: torus %s (%u nodes), tree radix %u, depth %u, longest root-to-rank "
            "path %u hops\n",
            run->name, run->dims, run->nodes, (unsigned)CONFIG_COMM_TREE_RADIX,
            (unsigned)run->tree_depth, (unsigned)run->tree_path_hops);
    fprintf(out, "  raw frame RTT (ping 1): median %.1f us, so L = %.1f us; model 2 L x %u "
                 "hops = %.1f us\n",
            (double)bench_comm_raw_rtt_ns(run) / 1e3, (double)bench_comm_raw_rtt_ns(run) / 2e3,
            (unsigned)run->tree_path_hops, bench_comm_model_ns(run) / 1e3);
    fprintf(out, "  barrier median %.1f us, allreduce (1 x int64) median %.1f us "
                 "(rank 0, %" PRIu64 " calls each)\n",
            (double)run->barrier_ns / 1e3, (double)run->allreduce_ns / 1e3,
            run->sizes > 0 ? run->size[0].rounds : 0);
}

void bench_comm_print_table(FILE *out, const struct bench_comm_options *o,
                            const struct bench_comm_run *runs, unsigned count)
{
    fprintf(out, "tori-bench-comm: %u round trips per size and collective calls, %u raw "
                 "pings, raw flood of %u full frames\n",
            o->rounds, o->pings, o->flood_count);
    for (unsigned r = 0; r < count; r++) {
        const struct bench_comm_run *run = &runs[r];
        if (run->status != 0) {
            fprintf(out, "\n%s: FAILED: %s\n", run->name,
                    run->error[0] != '\0' ? run->error : "failed");
            continue;
        }
        if (run->kind == BENCH_COMM_PAIR)
            print_pair(out, run);
        else
            print_collective(out, run);
    }
    fprintf(out, "\nratios (target; quoted, not enforced)\n");
    for (unsigned r = 0; r < count; r++)
        for (unsigned k = 0; k < RATIO_KINDS; k++) {
            double numerator = 0.0, denominator = 0.0;
            if (runs[r].kind != ratio_table[k].kind)
                continue;
            if (!ratio_terms(&runs[r], k, &numerator, &denominator)) {
                fprintf(out, "  %-16s  %-40s  not measured\n", runs[r].name,
                        ratio_table[k].title);
                continue;
            }
            double value = numerator / denominator;
            fprintf(out, "  %-16s  %-40s  %6.2f  (%.1f / %.1f %s; target %s %.2f: %s)\n",
                    runs[r].name, ratio_table[k].title, value, numerator, denominator,
                    ratio_table[k].unit, ratio_table[k].at_least ? ">=" : "<=",
                    ratio_table[k].target, ratio_met(k, value) ? "met" : "missed");
        }
    for (unsigned r = 0; r < count; r++)
        fprintf(out, "%s%s logs: %s\n", r == 0 ? "\n" : "", runs[r].name, runs[r].out_dir);
    fflush(out);
}

/* ---- JSON ---- */

static void json_run(FILE *out, const struct bench_comm_run *run)
{
    fputs("{\"name\":", out);
    bench_link_json_string(out, run->name);
    fputs(",\"board\":", out);
    bench_link_json_string(out, run->board);
    fputs(",\"dims\":", out);
    bench_link_json_string(out, run->dims);
    fprintf(out, ",\"nodes\":%u,\"status\":%d,\"error\":", run->nodes, run->status);
    if (run->status != 0)
        bench_link_json_string(out, run->error[0] != '\0' ? run->error : "failed");
    else
        fputs("null", out);
    fputs(",\"out_dir\":", out);
    bench_link_json_string(out, run->out_dir);
    const struct bench_link_spread *sp = &run->link.hop[0].spread;
    fprintf(out, ",\"raw_rtt_ns\":%" PRIu64 ",\"raw_rtt_p10_ns\":%" PRIu64
                 ",\"raw_rtt_p90_ns\":%" PRIu64 ",\"raw_pings\":%" PRIu64,
            sp->median, sp->p10, sp->p90, sp->count);
    fputs(",\"pingpong\":[", out);
    for (unsigned i = 0; i < run->sizes; i++) {
        const struct bench_comm_size *s = &run->size[i];
        fprintf(out, "%s{\"bytes\":%" PRIu64 ",\"rounds\":%" PRIu64 ",\"rtt_ns\":%" PRIu64
                     ",\"bandwidth_bytes_per_s\":",
                i > 0 ? "," : "", s->bytes, s->rounds, s->rtt_ns);
        bench_link_json_number(out, bench_link_ratio(2.0 * (double)s->bytes * 1e9,
                                                     (double)s->rtt_ns));
        fputc('}', out);
    }
    fputc(']', out);
    if (run->link.floods > 0) {
        const struct bench_link_flood *f = &run->link.flood[0];
        fprintf(out, ",\"raw_flood\":{\"count\":%" PRIu64 ",\"size\":%" PRIu64
                     ",\"sent\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"span_ns\":%" PRIu64
                     ",\"bandwidth_bytes_per_s\":",
                f->count, f->size, f->sent, f->delivered, f->span_ns);
        bench_link_json_number(out, bench_comm_flood_bandwidth(run));
        fputc('}', out);
    } else {
        fputs(",\"raw_flood\":null", out);
    }
    fprintf(out, ",\"barrier_ns\":%" PRIu64 ",\"allreduce_ns\":%" PRIu64
                 ",\"tree_depth\":%u,\"tree_path_hops\":%u,\"model_ns\":",
            run->barrier_ns, run->allreduce_ns, (unsigned)run->tree_depth,
            (unsigned)run->tree_path_hops);
    bench_link_json_number(out, bench_comm_model_ns(run));
    fputc('}', out);
}

void bench_comm_print_json(FILE *out, const struct bench_comm_options *o,
                           const struct bench_comm_run *runs, unsigned count)
{
    fprintf(out, "{\"benchmark\":\"comm\",\"rounds\":%u,\"pings\":%u,\"flood_count\":%u,"
                 "\"ring\":%u,\"collective_dims\":",
            o->rounds, o->pings, o->flood_count, BENCH_COMM_RING);
    if (o->collective_dims != NULL)
        bench_link_json_string(out, o->collective_dims);
    else
        fputs("null", out);
    fputs(",\"runs\":[", out);
    for (unsigned r = 0; r < count; r++) {
        if (r > 0)
            fputc(',', out);
        json_run(out, &runs[r]);
    }
    fputs("],\"ratios\":[", out);
    bool first = true;
    for (unsigned r = 0; r < count; r++)
        for (unsigned k = 0; k < RATIO_KINDS; k++) {
            if (runs[r].kind != ratio_table[k].kind)
                continue;
            double numerator = 0.0, denominator = 0.0;
            bool measured = ratio_terms(&runs[r], k, &numerator, &denominator);
            fprintf(out, "%s{\"name\":\"%s\",\"run\":", first ? "" : ",", ratio_table[k].key);
            first = false;
            bench_link_json_string(out, runs[r].name);
            fputs(",\"value\":", out);
            bench_link_json_number(out, measured ? numerator / denominator : NAN);
            fputs(",\"numerator\":", out);
            bench_link_json_number(out, measured ? numerator : NAN);
            fputs(",\"denominator\":", out);
            bench_link_json_number(out, measured ? denominator : NAN);
            fprintf(out, ",\"unit\":\"%s\",\"target\":", ratio_table[k].unit);
            bench_link_json_number(out, ratio_table[k].target);
            fprintf(out, ",\"target_is\":\"%s\",\"met\":%s}",
                    ratio_table[k].at_least ? "at_least" : "at_most",
                    !measured                                     ? "null"
                    : ratio_met(k, numerator / denominator) ? "true"
                                                                  : "false");
        }
    fputs("]}\n", out);
    fflush(out);
}
