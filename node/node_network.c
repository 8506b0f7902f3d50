/*
 * Node bring-up of the torus network: the geometry from the personality,
 * the board's link driver, the network and its services, a poller and a
 * timer that keeps the poll loop awake for the link layer's deadlines.
 */
#include <stdbool.h>
#include <string.h>

#include "board/board.h"
#include "kernel/console_command.h"
#include "kernel/event.h"
#include "kernel/job.h"
#include "kernel/main.h"
#include "kernel/panic.h"
#include "kernel/poll.h"
#include "kernel/timer.h"
#include "net/torus/driver.h"
#include "node/flood.h"
#include "node/node.h"

/* Frames handled per poll pass: bounds the time between timer checks. */
#define NODE_NETWORK_POLL_BUDGET CONFIG_RING_SIZE

static timer_id network_timer = -1;

/* Frames refused for their tag, as last told in a bad-tag event. */
#define NODE_NETWORK_BAD_TAG_EVENT_NS 1000000000ull
static uint64_t bad_tag_told;
static uint64_t bad_tag_told_ns;

/* Forged frames, or another job's, are news: the first is told at once,
 * later ones at most once a second (a flood must not flood the console). */
static void tell_bad_tags(const struct node *node, uint64_t now_ns)
{
    uint64_t refused = node->network.reception.counters.frames.count[TORUS_FRAME_DROP_BAD_TAG];
    if (refused == bad_tag_told ||
        (bad_tag_told != 0 && now_ns - bad_tag_told_ns < NODE_NETWORK_BAD_TAG_EVENT_NS))
        return;
    event_begin("bad-tag");
    event_add_u64("frames", refused);
    event_end();
    bad_tag_told = refused;
    bad_tag_told_ns = now_ns;
}

static unsigned network_poll(void *context, uint64_t now_ns)
{
    struct node *node = context;
    unsigned work = torus_network_poll(&node->network, NODE_NETWORK_POLL_BUDGET,
                                       now_ns);
    work += torus_ping_poll(&node->ping, now_ns);
    tell_bad_tags(node, now_ns);
    uint64_t deadline = torus_network_next_deadline(&node->network);
    uint64_t ping_deadline = torus_ping_next_deadline(&node->ping);
    if (ping_deadline < deadline)
        deadline = ping_deadline;
    if (deadline == UINT64_MAX)
        timer_disarm(timer_kernel_table(), network_timer);
    else
        timer_arm(timer_kernel_table(), network_timer, deadline);
    return work;
}

static void on_link_event(void *context, unsigned link, uint32_t neighbour,
                          enum torus_network_link_event what, uint64_t now_ns)
{
    struct node *node = context;
    bool lossy = what == TORUS_NETWORK_LINK_LOSSY;
    event_begin("link");
    event_add_str("link", torus_geometry_link_name(link));
    event_add_u64("peer", neighbour);
    event_add_str("state", lossy ? "lossy" : what == TORUS_NETWORK_LINK_UP ? "up" : "down");
    if (lossy)
        event_add_u64("retransmitted", torus_link_counter(&node->network.links[link],
                                                          TORUS_LINK_COUNT_RETRANSMITTED));
    event_end();
    if (lossy)
        node_membership_link_lossy(node, neighbour, now_ns);
    else
        node_membership_link_event(node, neighbour, what == TORUS_NETWORK_LINK_UP, now_ns);
}

static void command_stats(void *context, const char *arguments, uint64_t now_ns)
{
    (void)arguments;
    (void)now_ns;
    const struct node *node = context;
    event_begin("stats");
    for (unsigned c = 0; c < TORUS_NETWORK_COUNTER_COUNT; c++)
        event_add_u64(torus_network_counter_name(c),
                      torus_network_counter(&node->network, c));
    uint64_t retransmitted = 0;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++)
        retransmitted += torus_link_counter(&node->network.links[link],
                                            TORUS_LINK_COUNT_RETRANSMITTED);
    event_add_u64("retransmitted", retransmitted);
    /* Frames the reception ring refused: forged or from another job (bad
     * tag), damaged (bad checksum, keyless nodes only). */
    const struct torus_frame_counters *frames = &node->network.reception.counters.frames;
    event_add_u64("bad_tag", frames->count[TORUS_FRAME_DROP_BAD_TAG]);
    event_add_u64("bad_checksum", frames->count[TORUS_FRAME_DROP_BAD_CHECKSUM]);
    event_add_hex("up_mask", node->network.up_mask);
    const struct route_table *table = torus_network_route_table(&node->network);
    if (table != NULL) { /* --routing table */
        event_add_u64("route_entries", table->entry_count);
        event_add_u64("route_adverts", route_table_counter(table, ROUTE_TABLE_COUNT_ADVERTS_SENT));
        event_add_u64("route_table_full", route_table_counter(table, ROUTE_TABLE_COUNT_TABLE_FULL));
    }
    event_end();
}

/* "link x+ off|on": cut or mend a cable from inside, for fault injection on
 * boards without a switchable NIC (host); QEMU can also use QMP set_link. */
static void command_link(void *context, const char *arguments, uint64_t now_ns)
{
    (void)now_ns;
    struct node *node = context;
    char name[3] = {0};
    unsigned link;
    const char *state = arguments;
    if (strlen(arguments) >= 2) {
        memcpy(name, arguments, 2);
        state = arguments + 2;
        while (*state == ' ')
            state++;
    }
    bool off = strcmp(state, "off") == 0;
    if (!torus_geometry_link_from_name(name, &link) ||
        (!off && strcmp(state, "on") != 0) ||
        !torus_network_cut_link(&node->network, link, off)) {
        console_command_reply_error("link: expected 'link DIR off|on' with a link this node has");
        return;
    }
    event_begin("link-cut");
    event_add_str("link", torus_geometry_link_name(link));
    event_add_str("state", off ? "off" : "on");
    event_end();
}

_Static_assert(BOARD_KEY_BYTES == TORUS_FRAME_KEY_BYTES &&
                   JOB_KEY_BYTES == TORUS_FRAME_KEY_BYTES,
               "one job key size");

/* The job key frames are tagged with: the job block's, else the board's
 * (host: --key-file).  None: keyless, where the board allows it or the
 * node has no link; otherwise (host UDP, reachable by any local process)
 * the node stops. */
static bool network_key(struct torus_frame_key *key, uint32_t link_mask)
{
    const struct job *job = kernel_job();
    uint8_t board_key[BOARD_KEY_BYTES];
    bool board_has_key = board_link_key(board_key);
    bool job_keyed = job != NULL && job_has_key(job);
    if (job_keyed && board_has_key && memcmp(board_key, job->job_key, BOARD_KEY_BYTES) != 0)
        kernel_panic("network: the job block and --key-file hold different job keys "
                     "(expected the key in one place)");
    if (job_keyed)
        memcpy(key->bytes, job->job_key, TORUS_FRAME_KEY_BYTES);
    else if (board_has_key)
        memcpy(key->bytes, board_key, TORUS_FRAME_KEY_BYTES);
    memset(board_key, 0, sizeof board_key);
    if (!job_keyed && !board_has_key && link_mask != 0 && !board_keyless_allowed())
        kernel_panic("network: no job key: this board's links are open to other processes "
                     "(expected a key in the job block or --key-file FILE, or --auth off)");
    return job_keyed || board_has_key;
}

void node_network_init(struct node *node)
{
    const struct personality *p = node->personality;
    struct torus_network_config config;
    memset(&config, 0, sizeof config);
    uint32_t sizes[CONFIG_MAX_DIMS];
    bool mesh[CONFIG_MAX_DIMS];
    for (unsigned d = 0; d < p->dims; d++) {
        sizes[d] = p->dim_size[d];
        mesh[d] = personality_is_mesh(p, d);
    }
    /* The personality was validated against the same limits. */
    if (torus_geometry_init(&config.geometry, p->dims, sizes, mesh, NULL) !=
        TORUS_GEOMETRY_OK)
        kernel_panic("network: the personality's torus shape is unusable");
    config.rank = p->node_id;
    config.incarnation = p->boot_incarnation;
    config.link_rto_ns = (uint64_t)p->link_rto_ms * 1000000u;
    config.link_retries = p->link_retries;
    const struct job *job = kernel_job();
    if (job != NULL) { /* 0: the link layer's defaults */
        config.link_lossy_retransmits = job->link_lossy_retransmits;
        config.link_lossy_window_ns = (uint64_t)job->link_lossy_window_ms * 1000000u;
    }
    const char *error = NULL;
    if (!torus_driver_init(&config.geometry, config.rank, &config.link_mask, &error))
        kernel_panic(error != NULL ? error : "network: link driver failed");
    config.keyed = network_key(&config.key, config.link_mask);
    config.routing_table = job != NULL && job->routing_mode == JOB_ROUTING_TABLE;

    torus_network_init(&node->network, &config);
    torus_network_set_link_handler(&node->network, on_link_event, node);
    torus_ping_init(&node->ping, &node->network);
    torus_flood_service_init(&node->network);
    network_timer = timer_add_wakeup(timer_kernel_table(), "network");
    if (network_timer < 0)
        kernel_panic("network: timer table full (raise CONFIG_MAX_TIMERS)");
    poll_register("network", network_poll, node);
    console_command_register("stats", command_stats, node, CONSOLE_NO_ARGUMENTS);
    console_command_register("link", command_link, node, CONSOLE_ARGUMENTS);

    event_begin("network");
    event_add_str("driver", torus_driver_name());
    event_add_hex("links", config.link_mask);
    event_add_str("auth", config.keyed ? "siphash" : "off");
    event_add_str("routing", config.routing_table ? "table" : "detour");
    event_end();
    memset(&config.key, 0, sizeof config.key); /* the network keeps its copy */
}
