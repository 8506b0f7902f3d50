/*
 * tori-bench-link's output: the compact table and the JSON object.  Every
 * time is printed beside the one-hop RTT of the same board and run, and
 * every ratio is to that baseline.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "qemu/bench/bench_link.h"

/* "182.3 us", "4.10 ms", "950 ns". */
static const char *format_time(double ns, char *text, size_t capacity)
{
    if (ns < 1e3)
        snprintf(text, capacity, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(text, capacity, "%.1f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(text, capacity, "%.2f ms", ns / 1e6);
    else
        snprintf(text, capacity, "%.2f s", ns / 1e9);
    return text;
}

static uint64_t lost_of(const struct bench_link_flood *f)
{
    return f->sent > f->delivered ? f->sent - f->delivered : 0;
}

/* Delivered frames per one-hop round-trip time. */
static double frames_per_rtt(const struct bench_link_flood *f, uint64_t one_hop_ns)
{
    return bench_link_ratio((double)f->delivered * (double)one_hop_ns, (double)f->span_ns);
}

/* Counters that lose, refuse or repeat frames: listed by name when not 0. */
static const enum bench_link_counter drop_counters[] = {
    BENCH_LINK_COUNT_DRV_SEND_BUSY,  BENCH_LINK_COUNT_DRV_SEND_ERRORS,
    BENCH_LINK_COUNT_DRV_RECEIVE_DROPS, BENCH_LINK_COUNT_BAD_FRAMES,
    BENCH_LINK_COUNT_RING_FULL,      BENCH_LINK_COUNT_DRIVER_BUSY,
    BENCH_LINK_COUNT_LINK_NOT_UP,    BENCH_LINK_COUNT_NO_ROUTE,
    BENCH_LINK_COUNT_LINK_DROPS,     BENCH_LINK_COUNT_TTL_EXPIRED,
    BENCH_LINK_COUNT_STALE,          BENCH_LINK_COUNT_DISCARDED,
    BENCH_LINK_COUNT_DOWN_EVENTS,
};

void bench_link_print_table(FILE *out, const struct bench_link_options *o,
                            const struct bench_link_board *boards, unsigned count)
{
    char t[6][32];
    fprintf(out, "tori-bench-link: 1-D torus of %u nodes per board, %u rounds per hop "
                 "count, floods of %u x %u-byte frames\n",
            o->ring, o->rounds, o->flood_count, o->flood_size);

    fprintf(out, "\nround trips, node 0 to node H (ratio: median / one-hop median of "
                 "the same board)\n");
    fprintf(out, "%-5s %4s %6s %5s %10s %10s %10s %10s %10s %6s\n", "board", "hops", "n",
            "fail", "median", "p10", "p90", "min", "max", "ratio");
    for (unsigned b = 0; b < count; b++) {
        const struct bench_link_board *r = &boards[b];
        if (!r->rtt_done)
            continue;
        double one = (double)bench_link_one_hop_ns(r);
        for (unsigned h = 0; h < r->max_hops; h++) {
            const struct bench_link_hop *hop = &r->hop[h];
            const struct bench_link_spread *sp = &hop->spread;
            fprintf(out, "%-5s %4u %6" PRIu64 " %5" PRIu64 " %10s %10s %10s %10s %10s %6.2f%s\n",
                    r->name, (unsigned)hop->hops, hop->samples, hop->failed,
                    format_time((double)sp->median, t[0], sizeof t[0]),
                    format_time((double)sp->p10, t[1], sizeof t[1]),
                    format_time((double)sp->p90, t[2], sizeof t[2]),
                    format_time((double)sp->min, t[3], sizeof t[3]),
                    format_time((double)sp->max, t[4], sizeof t[4]),
                    bench_link_ratio((double)sp->median, one),
                    hop->wrong_hops > 0 ? "  (some answers took another path length)" : "");
        }
    }

    fprintf(out, "\nper extra hop: least-squares slope of the median RTT over hops "
                 "(one more forwarding node, there and back)\n");
    fprintf(out, "%-5s %12s %14s %12s %7s\n", "board", "slope", "x one-hop RTT",
            "one-hop RTT", "points");
    for (unsigned b = 0; b < count; b++) {
        const struct bench_link_board *r = &boards[b];
        if (!r->rtt_done)
            continue;
        double one = (double)bench_link_one_hop_ns(r);
        if (!r->per_hop.valid) {
            fprintf(out, "%-5s %12s %14s %12s %7u\n", r->name, "-", "-",
                    format_time(one, t[1], sizeof t[1]), r->per_hop.points);
            continue;
        }
        char slope[40];
        double value = r->per_hop.slope;
        snprintf(slope, sizeof slope, "%s%s", value < 0 ? "-" : "+",
                 format_time(fabs(value), t[0], sizeof t[0]));
        fprintf(out, "%-5s %12s %14.2f %12s %7u\n", r->name, slope,
                bench_link_ratio(value, one), format_time(one, t[1], sizeof t[1]),
                r->per_hop.points);
    }

    fprintf(out, "\nfloods, node 0 to node H (counters: deltas summed over the path's "
                 "nodes)\n");
    fprintf(out, "%-5s %4s %8s %9s %6s %7s %10s %8s %8s %5s %5s %10s %10s\n", "board",
            "hops", "sent", "delivered", "lost", "loss", "frames/RTT", "retrans",
            "timeouts", "dup", "ooo", "span", "1-hop RTT");
    for (unsigned b = 0; b < count; b++) {
        const struct bench_link_board *r = &boards[b];
        uint64_t one = bench_link_one_hop_ns(r);
        for (unsigned i = 0; i < r->floods; i++) {
            const struct bench_link_flood *f = &r->flood[i];
            fprintf(out, "%-5s %4u %8" PRIu64 " %9" PRIu64 " %6" PRIu64 " %6.2f%% %10.2f %8"
                         PRIu64 " %8" PRIu64 " %5" PRIu64 " %5" PRIu64 " %10s %10s\n",
                    r->name, (unsigned)f->hops, f->sent, f->delivered, lost_of(f),
                    100.0 * bench_link_ratio((double)lost_of(f), (double)f->sent),
                    frames_per_rtt(f, one), f->counter[BENCH_LINK_COUNT_RETRANSMITTED],
                    f->counter[BENCH_LINK_COUNT_TIMEOUTS],
                    f->counter[BENCH_LINK_COUNT_DUPLICATES],
                    f->counter[BENCH_LINK_COUNT_OUT_OF_ORDER],
                    format_time((double)f->span_ns, t[0], sizeof t[0]),
                    format_time((double)one, t[1], sizeof t[1]));
            fprintf(out, "      loss: %s", lost_of(f) == 0 && f->sent == f->count
                                               ? "none (every frame sent was delivered)"
                                               : "");
            if (lost_of(f) > 0)
                fprintf(out, "%" PRIu64 " of %" PRIu64 " frames sent were not delivered",
                        lost_of(f), f->sent);
            if (f->sent < f->count)
                fprintf(out, "%s%" PRIu64 " of %" PRIu64 " frames were never sent (%s)",
                        lost_of(f) > 0 ? "; " : "", f->count - f->sent, f->count,
                        f->stalled ? "no route: the flood stalled" : "sender stopped");
            if (f->missing + f->old > 0)
                fprintf(out, "; receiver saw %" PRIu64 " sequence gaps, %" PRIu64
                             " repeats",
                        f->missing, f->old);
            fprintf(out, "\n      drops and refusals:");
            bool any = false;
            for (size_t d = 0; d < sizeof drop_counters / sizeof drop_counters[0]; d++) {
                uint64_t value = f->counter[drop_counters[d]];
                if (value == 0)
                    continue;
                fprintf(out, " %s=%" PRIu64, bench_link_counter_name(drop_counters[d]),
                        value);
                any = true;
            }
            fprintf(out, "%s; sender waited on a full ring %" PRIu64 " times\n",
                    any ? "" : " none", f->waits);
        }
    }
    fprintf(out, "\nframe check per hop (seal + verify on node 0's CPU, this run): keyless "
                 "CRC-32 against the job key's SipHash-2-4 tag\n");
    fprintf(out, "%-5s %8s %10s %10s %9s %14s\n", "board", "payload", "CRC-32", "tag",
            "tag/CRC", "tag/1-hop RTT");
    for (unsigned b = 0; b < count; b++) {
        const struct bench_link_board *r = &boards[b];
        double one = (double)bench_link_one_hop_ns(r);
        for (unsigned c = 0; c < r->checks; c++) {
            const struct bench_link_check_cost *k = &r->check[c];
            /* A round trip is two frames, each checked once per hop. */
            fprintf(out, "%-5s %8u %10s %10s %9.2f %13.3f%%\n", r->name, k->size,
                    format_time(k->crc_ns, t[0], sizeof t[0]),
                    format_time(k->tag_ns, t[1], sizeof t[1]),
                    bench_link_ratio(k->tag_ns, k->crc_ns),
                    100.0 * bench_link_ratio(2.0 * k->tag_ns, one));
        }
    }
    fprintf(out, "\nmembership in the background (false suspicions mean the host was "
                 "loaded):");
    for (unsigned b = 0; b < count; b++)
        fprintf(out, "%s %s %" PRIu64 " failure detections, %" PRIu64 " views installed",
                b == 0 ? "" : ";", boards[b].name, boards[b].failure_detections,
                boards[b].views);
    fputc('\n', out);
    for (unsigned b = 0; b < count; b++) {
        const struct bench_link_board *r = &boards[b];
        if (r->status != 0)
            fprintf(out, "\n%s: FAILED: %s\n", r->name,
                    r->error[0] != '\0' ? r->error : "see the messages above");
    }
    for (unsigned b = 0; b < count; b++)
        fprintf(out, "%s%s logs: %s\n", b == 0 ? "\n" : "", boards[b].name,
                boards[b].out_dir);
}

/* ---- JSON ---- */

void bench_link_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

void bench_link_json_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, "%.6g", value);
    else
        fputs("null", out);
}

static void json_board(FILE *out, const struct bench_link_board *r)
{
    double one = (double)bench_link_one_hop_ns(r);
    fprintf(out, "{\"board\":");
    bench_link_json_string(out, r->name);
    fprintf(out, ",\"status\":%d,\"error\":", r->status);
    if (r->status != 0)
        bench_link_json_string(out, r->error[0] != '\0' ? r->error : "failed");
    else
        fputs("null", out);
    fprintf(out, ",\"out\":");
    bench_link_json_string(out, r->out_dir);
    fprintf(out, ",\"nodes\":%u,\"one_hop_rtt_ns\":%" PRIu64
                 ",\"membership\":{\"failure_detections\":%" PRIu64 ",\"views\":%" PRIu64
                 "},\"rtt\":[",
            r->nodes, bench_link_one_hop_ns(r), r->failure_detections, r->views);
    for (unsigned h = 0; r->rtt_done && h < r->max_hops; h++) {
        const struct bench_link_hop *hop = &r->hop[h];
        const struct bench_link_spread *sp = &hop->spread;
        fprintf(out, "%s{\"hops\":%u,\"samples\":%" PRIu64 ",\"failed\":%" PRIu64
                     ",\"wrong_hops\":%" PRIu64 ",\"median_ns\":%" PRIu64
                     ",\"p10_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64
                     ",\"max_ns\":%" PRIu64 ",\"ratio_to_one_hop\":",
                h == 0 ? "" : ",", (unsigned)hop->hops, hop->samples, hop->failed,
                hop->wrong_hops, sp->median, sp->p10, sp->p90, sp->min, sp->max);
        bench_link_json_number(out, bench_link_ratio((double)sp->median, one));
        fputc('}', out);
    }
    fputs("],\"per_hop\":", out);
    if (r->rtt_done && r->per_hop.valid) {
        fprintf(out, "{\"fit\":\"least squares over per-hop medians\",\"points\":%u,"
                     "\"slope_ns\":",
                r->per_hop.points);
        bench_link_json_number(out, r->per_hop.slope);
        fputs(",\"intercept_ns\":", out);
        bench_link_json_number(out, r->per_hop.intercept);
        fputs(",\"ratio_to_one_hop\":", out);
        bench_link_json_number(out, bench_link_ratio(r->per_hop.slope, one));
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputs(",\"frame_check\":[", out);
    for (unsigned c = 0; c < r->checks; c++) {
        const struct bench_link_check_cost *k = &r->check[c];
        fprintf(out, "%s{\"payload\":%u,\"crc_ns\":", c == 0 ? "" : ",", k->size);
        bench_link_json_number(out, k->crc_ns);
        fputs(",\"tag_ns\":", out);
        bench_link_json_number(out, k->tag_ns);
        fputs(",\"tag_to_crc\":", out);
        bench_link_json_number(out, bench_link_ratio(k->tag_ns, k->crc_ns));
        fputs(",\"tag_round_trip_to_one_hop_rtt\":", out);
        bench_link_json_number(out, bench_link_ratio(2.0 * k->tag_ns, one));
        fputc('}', out);
    }
    fputs("],\"floods\":[", out);
    for (unsigned i = 0; i < r->floods; i++) {
        const struct bench_link_flood *f = &r->flood[i];
        fprintf(out, "%s{\"hops\":%u,\"dst\":%u,\"count\":%" PRIu64 ",\"size\":%" PRIu64
                     ",\"sent\":%" PRIu64 ",\"delivered\":%" PRIu64 ",\"lost\":%" PRIu64
                     ",\"loss_ratio\":",
                i == 0 ? "" : ",", (unsigned)f->hops, (unsigned)f->destination, f->count,
                f->size, f->sent, f->delivered, lost_of(f));
        bench_link_json_number(out, bench_link_ratio((double)lost_of(f), (double)f->sent));
        fprintf(out, ",\"missing\":%" PRIu64 ",\"old\":%" PRIu64 ",\"stalled\":%s"
                     ",\"span_ns\":%" PRIu64 ",\"sender_ns\":%" PRIu64
                     ",\"sender_waits\":%" PRIu64 ",\"frames_per_one_hop_rtt\":",
                f->missing, f->old, f->stalled ? "true" : "false", f->span_ns,
                f->sender_ns, f->waits);
        bench_link_json_number(out, frames_per_rtt(f, (uint64_t)one));
        fputs(",\"counters\":{", out);
        for (unsigned c = 0; c < BENCH_LINK_COUNTER_COUNT; c++)
            fprintf(out, "%s\"%s\":%" PRIu64, c == 0 ? "" : ",",
                    bench_link_counter_name(c), f->counter[c]);
        fputs("}}", out);
    }
    fputs("]}", out);
}

void bench_link_print_json(FILE *out, const struct bench_link_options *o,
                           const struct bench_link_board *boards, unsigned count)
{
    fprintf(out, "{\"benchmark\":\"link\",\"ring\":%u,\"rounds\":%u,\"warmup_rounds\":%u,"
                 "\"flood_count\":%u,\"flood_size\":%u,\"boards\":[",
            o->ring, o->rounds, BENCH_LINK_WARMUP_ROUNDS, o->flood_count, o->flood_size);
    for (unsigned b = 0; b < count; b++) {
        if (b > 0)
            fputc(',', out);
        json_board(out, &boards[b]);
    }
    fputs("]}\n", out);
    fflush(out);
}
