#include "net/torus/link.h"

#include <string.h>

#define WINDOW_MASK ((uint32_t)CONFIG_LINK_WINDOW - 1u)

static const char *const counter_names[] = {
#define TORUS_LINK_COUNTER_NAME(name, text) text,
    TORUS_LINK_COUNTERS(TORUS_LINK_COUNTER_NAME)
#undef TORUS_LINK_COUNTER_NAME
};

static const char *const verdict_names[] = {
#define TORUS_LINK_VERDICT_NAME(name, text) text,
    TORUS_LINK_VERDICTS(TORUS_LINK_VERDICT_NAME)
#undef TORUS_LINK_VERDICT_NAME
};

static const char *const state_names[] = {"syncing", "up", "down"};

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
    return a > TORUS_LINK_NEVER - b ? TORUS_LINK_NEVER : a + b;
}

static uint32_t next_incarnation(uint32_t incarnation)
{
    incarnation++;
    return incarnation == 0 ? 1u : incarnation;
}

/* True when incarnation a came after b (modulo 2^32, as sequence numbers). */
static bool is_newer(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

static uint64_t silence_limit_ns(const struct torus_link *link)
{
    uint64_t interval = link->config.keepalive_interval_ns;
    uint64_t rounds = (uint64_t)link->config.retry_limit + 1u;
    return interval > TORUS_LINK_NEVER / rounds ? TORUS_LINK_NEVER : interval * rounds;
}

/* The dead-peer bound: (retry_limit + 1) rtos without progress. */
static uint64_t dead_peer_ns(const struct torus_link *link)
{
    uint64_t rto = link->config.rto_ns;
    uint64_t rounds = (uint64_t)link->config.retry_limit + 1u;
    return rto > TORUS_LINK_NEVER / rounds ? TORUS_LINK_NEVER : rto * rounds;
}

/* An ack (or SYN) is owed no later than deadline. */
static void owe_control(struct torus_link *link, uint64_t deadline)
{
    if (deadline < link->control_deadline)
        link->control_deadline = deadline;
}

static void fill_link_fields(const struct torus_link *link, uint8_t flags,
                             uint32_t sequence,
                             struct torus_frame_link_fields *fields)
{
    memcpy(fields->destination_mac, link->peer_mac, TORUS_FRAME_MAC_SIZE);
    memcpy(fields->source_mac, link->local_mac, TORUS_FRAME_MAC_SIZE);
    fields->flags = flags;
    fields->sequence = sequence;
    fields->ack = link->expected;
    fields->sender_incarnation = link->local_incarnation;
    fields->receiver_incarnation = link->peer_incarnation;
}

/* Every frame that leaves carries the current ack (and a pending NAK). */
static uint8_t ack_going_out(struct torus_link *link)
{
    uint8_t flags = link->nak_pending ? TORUS_FRAME_FLAG_NAK : 0;
    link->nak_pending = false;
    link->ack_sent = link->expected;
    return flags;
}

static void become_up(struct torus_link *link, uint64_t now_ns)
{
    link->state = TORUS_LINK_UP;
    link->last_heard_ns = now_ns;
    link->events |= TORUS_LINK_EVENT_UP;
    link->counters[TORUS_LINK_COUNT_UP_EVENTS]++;
    link->control_deadline = TORUS_LINK_NEVER;
    link->syn_requested = false;
}

/* Ends the session of an UP link: a new incarnation, empty window, and
 * back to handshaking (a SYN is due at once). */
enum session_end { END_TIMEOUT, END_PEER_RESET, END_SILENCE };

static void end_session(struct torus_link *link, uint64_t now_ns, enum session_end why)
{
    link->counters[TORUS_LINK_COUNT_DISCARDED] += link->next_sequence - link->send_base;
    link->counters[TORUS_LINK_COUNT_DOWN_EVENTS]++;
    if (why == END_PEER_RESET)
        link->counters[TORUS_LINK_COUNT_PEER_RESETS]++;
    if (why == END_SILENCE)
        link->counters[TORUS_LINK_COUNT_SILENCES]++;
    link->events |= TORUS_LINK_EVENT_DOWN;
    link->state = TORUS_LINK_DOWN;
    link->local_incarnation = next_incarnation(link->local_incarnation);
    link->send_base = 0;
    link->next_sequence = 0;
    link->retries = 0;
    link->rto_deadline = TORUS_LINK_NEVER;
    link->resend_now = false;
    link->nak_answered = false;
    link->expected = 0;
    link->ack_sent = 0;
    link->nak_pending = false;
    link->nak_sent = false;
    link->syn_requested = false;
    link->datagram_next = 0;
    link->datagram_expected = 0;
    link->datagram_since = TORUS_LINK_NEVER;
    link->control_deadline = now_ns;
}

void torus_link_config_defaults(struct torus_link_config *config)
{
    memset(config, 0, sizeof(*config));
    config->rto_ns = 20u * 1000u * 1000u;
    config->retry_limit = 5;
    config->ack_delay_ns = 1000u * 1000u;
    config->probe_interval_ns = 0;
    config->keepalive_interval_ns = 0;
    config->lossy_retransmits = TORUS_LINK_LOSSY_RETRANSMITS;
    config->lossy_window_ns = TORUS_LINK_LOSSY_WINDOW_NS;
}

bool torus_link_init(struct torus_link *link, const struct torus_link_config *config)
{
    memset(link, 0, sizeof(*link));
    link->state = TORUS_LINK_SYNCING;
    link->rto_deadline = TORUS_LINK_NEVER;
    link->control_deadline = TORUS_LINK_NEVER;
    link->datagram_since = TORUS_LINK_NEVER;
    if (config->rto_ns == 0 || config->local_link >= CONFIG_MAX_LINKS)
        return false;
    link->config = *config;
    if (link->config.probe_interval_ns == 0)
        link->config.probe_interval_ns = config->rto_ns;
    if (link->config.keepalive_interval_ns == 0)
        link->config.keepalive_interval_ns =
            config->rto_ns > TORUS_LINK_NEVER / TORUS_LINK_KEEPALIVE_RTOS
                ? TORUS_LINK_NEVER
                : config->rto_ns * TORUS_LINK_KEEPALIVE_RTOS;
    link->local_incarnation = config->incarnation != 0 ? config->incarnation : 1u;
    torus_frame_mac_for_link(config->local_rank, config->local_link, link->local_mac);
    torus_frame_mac_for_link(config->peer_rank, config->local_link ^ 1u, link->peer_mac);
    link->control_deadline = 0; /* the first SYN goes out at the first tick */
    return true;
}

enum torus_link_send_status torus_link_send(struct torus_link *link, uint8_t *frame,
                                            size_t length, uint64_t now_ns)
{
    if (!torus_frame_is_well_formed(frame, length) ||
        frame[TORUS_FRAME_OFFSET_TYPE] == TORUS_FRAME_TYPE_LINK_ACK ||
        frame[TORUS_FRAME_OFFSET_TYPE] >= TORUS_FRAME_TYPE_COUNT) {
        link->counters[TORUS_LINK_COUNT_BAD_FRAMES]++;
        return TORUS_LINK_SEND_BAD_FRAME;
    }
    if (link->state != TORUS_LINK_UP) {
        link->counters[TORUS_LINK_COUNT_NOT_UP]++;
        return TORUS_LINK_SEND_NOT_UP;
    }
    bool datagram = (frame[TORUS_FRAME_OFFSET_FLAGS] & TORUS_FRAME_FLAG_DATAGRAM) != 0;
    if (!datagram && torus_link_in_flight(link) >= CONFIG_LINK_WINDOW) {
        link->counters[TORUS_LINK_COUNT_WINDOW_FULL]++;
        return TORUS_LINK_SEND_WINDOW_FULL;
    }
    struct torus_frame_link_fields fields;
    fill_link_fields(link, ack_going_out(link),
                     datagram ? link->datagram_next++ : link->next_sequence, &fields);
    torus_frame_stamp_link(frame, length, &fields, link->config.key);
    /* The piggybacked ack pays what was owed (a requested SYN still goes). */
    if (!link->syn_requested)
        link->control_deadline = TORUS_LINK_NEVER;
    link->last_sent_ns = now_ns;
    link->counters[TORUS_LINK_COUNT_SENT]++;
    if (datagram) {
        /* Sent once, under its own sequence number; the peer answers it
         * lazily, and a silence from now on is timed. */
        if (link->datagram_since == TORUS_LINK_NEVER)
            link->datagram_since = now_ns;
        link->counters[TORUS_LINK_COUNT_DATAGRAMS_SENT]++;
        return TORUS_LINK_SEND_OK;
    }

    struct torus_link_slot *slot = &link->window[link->next_sequence & WINDOW_MASK];
    memcpy(slot->frame, frame, length);
    slot->length = (uint16_t)length;
    if (torus_link_in_flight(link) == 0)
        link->rto_deadline = add_saturating(now_ns, link->config.rto_ns);
    link->next_sequence++;
    return TORUS_LINK_SEND_OK;
}

/* The ack carried by a frame of the current session. */
static void take_ack(struct torus_link *link, const struct torus_frame_header *h,
                     uint64_t now_ns)
{
    uint32_t in_flight = torus_link_in_flight(link);
    uint32_t advance = h->link_ack - link->send_base;
    if ((int32_t)advance < 0)
        return; /* an older ack, overtaken or repeated: nothing to learn */
    if (advance != 0) {
        if (advance > in_flight) {
            link->counters[TORUS_LINK_COUNT_BAD_ACKS]++;
            return;
        }
        link->send_base = h->link_ack;
        link->counters[TORUS_LINK_COUNT_ACKS_RECEIVED]++;
        link->counters[TORUS_LINK_COUNT_FRAMES_ACKED] += advance;
        link->retries = 0;
        link->resend_now = false;
        link->nak_answered = false;
        link->rto_deadline = torus_link_in_flight(link) == 0
                                 ? TORUS_LINK_NEVER
                                 : add_saturating(now_ns, link->config.rto_ns);
    }
    /* A NAK asks for everything from its ack on; answer it once per base. */
    if ((h->flags & TORUS_FRAME_FLAG_NAK) != 0 && h->link_ack == link->send_base &&
        torus_link_in_flight(link) > 0 && !link->nak_answered) {
        link->resend_now = true;
        link->nak_answered = true;
    }
}

static enum torus_link_verdict take_syn(struct torus_link *link,
                                        const struct torus_frame_header *h,
                                        uint64_t now_ns)
{
    uint32_t sender = h->link_sender_incarnation;
    uint32_t receiver = h->link_receiver_incarnation;
    if (sender == 0) {
        link->counters[TORUS_LINK_COUNT_STALE]++;
        return TORUS_LINK_STALE;
    }
    if (link->state == TORUS_LINK_UP) {
        if (sender == link->peer_incarnation) {
            /* The peer is still handshaking with us: an ack completes it; if
             * it names an old incarnation of ours, teach it the current one. */
            if (receiver != link->local_incarnation)
                link->syn_requested = true;
            else {
                link->last_heard_ns = now_ns;
                link->datagram_since = TORUS_LINK_NEVER;
            }
            owe_control(link, now_ns);
            return TORUS_LINK_CONTROL;
        }
        if (!is_newer(sender, link->peer_incarnation)) {
            link->counters[TORUS_LINK_COUNT_STALE]++;
            return TORUS_LINK_STALE; /* a handshake of an earlier session */
        }
        /* The peer has ended the session we share (restarted, or timed
         * out): ours is over too, whoever its SYN names. */
        end_session(link, now_ns, END_PEER_RESET);
        link->peer_incarnation = sender;
        return TORUS_LINK_CONTROL;
    }
    link->peer_incarnation = sender;
    if (receiver == link->local_incarnation) {
        become_up(link, now_ns);
        owe_control(link, now_ns); /* the ack that brings the peer up */
    } else {
        owe_control(link, now_ns); /* a SYN that teaches our incarnation */
    }
    return TORUS_LINK_CONTROL;
}

enum torus_link_verdict torus_link_receive(struct torus_link *link,
                                           const struct torus_frame_header *h,
                                           uint64_t now_ns)
{
    if (memcmp(h->source_mac, link->peer_mac, TORUS_FRAME_MAC_SIZE) != 0 ||
        memcmp(h->destination_mac, link->local_mac, TORUS_FRAME_MAC_SIZE) != 0) {
        link->counters[TORUS_LINK_COUNT_WRONG_PEER]++;
        return TORUS_LINK_WRONG_PEER;
    }
    bool datagram = (h->flags & TORUS_FRAME_FLAG_DATAGRAM) != 0;
    if ((h->flags & TORUS_FRAME_FLAG_SYN) != 0 ||
        (datagram && h->type == TORUS_FRAME_TYPE_LINK_ACK)) {
        if (h->type != TORUS_FRAME_TYPE_LINK_ACK || datagram) {
            link->counters[TORUS_LINK_COUNT_PROTOCOL]++;
            return TORUS_LINK_PROTOCOL;
        }
        return take_syn(link, h, now_ns);
    }
    if (link->peer_incarnation == 0 ||
        h->link_sender_incarnation != link->peer_incarnation ||
        h->link_receiver_incarnation != link->local_incarnation) {
        link->counters[TORUS_LINK_COUNT_STALE]++;
        return TORUS_LINK_STALE;
    }
    /* A frame of our session proves the peer holds both names: the
     * handshake is complete if it was not already. */
    if (link->state != TORUS_LINK_UP)
        become_up(link, now_ns);
    link->last_heard_ns = now_ns;
    link->datagram_since = TORUS_LINK_NEVER; /* the peer is there */
    take_ack(link, h, now_ns);
    if (h->type == TORUS_FRAME_TYPE_LINK_ACK)
        return TORUS_LINK_CONTROL;
    if (datagram) {
        /* Outside the data sequence: nothing to order, nothing to ack; one
         * not newer than the last taken is a replay. */
        if ((int32_t)(h->link_sequence - link->datagram_expected) < 0) {
            link->counters[TORUS_LINK_COUNT_DUPLICATES]++;
            return TORUS_LINK_DUPLICATE;
        }
        link->datagram_expected = h->link_sequence + 1u;
        link->counters[TORUS_LINK_COUNT_DATAGRAMS]++;
        owe_control(link, add_saturating(now_ns, dead_peer_ns(link) / 4u));
        return TORUS_LINK_DELIVER;
    }

    uint32_t ahead = h->link_sequence - link->expected;
    if (ahead == 0) {
        link->expected++;
        link->nak_sent = false;
        link->counters[TORUS_LINK_COUNT_DELIVERED]++;
        if (link->expected - link->ack_sent >= CONFIG_LINK_WINDOW / 2)
            owe_control(link, now_ns);
        else
            owe_control(link, add_saturating(now_ns, link->config.ack_delay_ns));
        return TORUS_LINK_DELIVER;
    }
    if ((int32_t)ahead < 0) {
        /* Our ack was probably lost: repeat it now. */
        link->counters[TORUS_LINK_COUNT_DUPLICATES]++;
        owe_control(link, now_ns);
        return TORUS_LINK_DUPLICATE;
    }
    link->counters[TORUS_LINK_COUNT_OUT_OF_ORDER]++;
    if (!link->nak_sent) {
        link->nak_sent = true;
        link->nak_pending = true;
        owe_control(link, now_ns);
    }
    return TORUS_LINK_OUT_OF_ORDER;
}

static void emit(struct torus_link_outbox *out, const uint8_t *frame, size_t length)
{
    if (out->count < TORUS_LINK_OUTBOX_SIZE) {
        out->frame[out->count] = frame;
        out->length[out->count] = (uint16_t)length;
        out->count++;
    }
}

/* One frame resent: counted in the loss window, which raises LOSSY once
 * when it holds more than the limit. */
static void count_resend(struct torus_link *link, uint64_t now_ns)
{
    if (link->lossy_count == 0 ||
        now_ns >= add_saturating(link->lossy_since_ns, link->config.lossy_window_ns)) {
        link->lossy_since_ns = now_ns;
        link->lossy_count = 0;
        link->lossy_told = false;
    }
    link->lossy_count++;
    if (link->config.lossy_retransmits != 0 && !link->lossy_told &&
        link->lossy_count > link->config.lossy_retransmits) {
        link->lossy_told = true;
        link->events |= TORUS_LINK_EVENT_LOSSY;
        link->counters[TORUS_LINK_COUNT_LOSSY_EVENTS]++;
    }
}

/* Go-back-N: every unacknowledged frame again, with a fresh ack. */
static void resend_window(struct torus_link *link, uint64_t now_ns,
                          struct torus_link_outbox *out)
{
    uint8_t flags = ack_going_out(link);
    for (uint32_t seq = link->send_base; seq != link->next_sequence; seq++) {
        struct torus_link_slot *slot = &link->window[seq & WINDOW_MASK];
        struct torus_frame_link_fields fields;
        fill_link_fields(link, flags, seq, &fields);
        torus_frame_stamp_link(slot->frame, slot->length, &fields, link->config.key);
        emit(out, slot->frame, slot->length);
        link->counters[TORUS_LINK_COUNT_RETRANSMITTED]++;
        count_resend(link, now_ns);
    }
    if (!link->syn_requested)
        link->control_deadline = TORUS_LINK_NEVER;
}

static void send_control(struct torus_link *link, uint64_t now_ns, bool keepalive,
                         struct torus_link_outbox *out)
{
    bool syn = link->state != TORUS_LINK_UP || link->syn_requested;
    uint8_t flags = (uint8_t)(ack_going_out(link) | (syn ? TORUS_FRAME_FLAG_SYN : 0));
    struct torus_frame_header h;
    memset(&h, 0, sizeof(h));
    h.type = TORUS_FRAME_TYPE_LINK_ACK;
    h.ttl = 1;
    h.source = link->config.local_rank;
    h.destination = link->config.peer_rank;
    /* Keyless here: the stamp below seals it under the link's key. */
    size_t length = torus_frame_encode(&h, NULL, 0, NULL, link->control, sizeof(link->control));
    struct torus_frame_link_fields fields;
    fill_link_fields(link, flags, link->next_sequence, &fields);
    torus_frame_stamp_link(link->control, length, &fields, link->config.key);
    emit(out, link->control, length);
    link->counters[syn         ? TORUS_LINK_COUNT_SYNS_SENT
                   : keepalive ? TORUS_LINK_COUNT_KEEPALIVES
                               : TORUS_LINK_COUNT_ACKS_SENT]++;
    link->syn_requested = false;
    link->control_deadline = link->state == TORUS_LINK_UP
                                 ? TORUS_LINK_NEVER
                                 : add_saturating(now_ns, link->config.probe_interval_ns);
}

unsigned torus_link_tick(struct torus_link *link, uint64_t now_ns,
                         struct torus_link_outbox *out)
{
    out->count = 0;
    if (link->state == TORUS_LINK_UP && torus_link_in_flight(link) > 0) {
        if (now_ns >= link->rto_deadline) {
            link->counters[TORUS_LINK_COUNT_TIMEOUTS]++;
            if (link->retries >= link->config.retry_limit) {
                end_session(link, now_ns, END_TIMEOUT);
            } else {
                link->retries++;
                link->resend_now = false;
                resend_window(link, now_ns, out);
                link->rto_deadline = add_saturating(now_ns, link->config.rto_ns);
            }
        } else if (link->resend_now) {
            link->counters[TORUS_LINK_COUNT_FAST_RETRANSMITS]++;
            link->resend_now = false;
            resend_window(link, now_ns, out);
            link->rto_deadline = add_saturating(now_ns, link->config.rto_ns);
        }
    }
    if (link->state == TORUS_LINK_UP &&
        now_ns >= add_saturating(link->datagram_since, dead_peer_ns(link))) {
        link->counters[TORUS_LINK_COUNT_TIMEOUTS]++;
        end_session(link, now_ns, END_TIMEOUT); /* datagrams went unanswered */
    }
    if (link->state == TORUS_LINK_UP &&
        now_ns >= add_saturating(link->last_heard_ns, silence_limit_ns(link)))
        end_session(link, now_ns, END_SILENCE);
    if (now_ns >= link->control_deadline)
        send_control(link, now_ns, false, out);
    else if (link->state == TORUS_LINK_UP && out->count == 0 &&
             now_ns >= add_saturating(link->last_sent_ns, link->config.keepalive_interval_ns))
        send_control(link, now_ns, true, out);
    if (out->count > 0)
        link->last_sent_ns = now_ns;
    return out->count;
}

uint64_t torus_link_next_deadline(const struct torus_link *link)
{
    uint64_t deadline = link->control_deadline;
    if (link->state != TORUS_LINK_UP)
        return deadline;
    if (torus_link_in_flight(link) > 0) {
        uint64_t resend = link->resend_now ? 0 : link->rto_deadline;
        if (resend < deadline)
            deadline = resend;
    }
    uint64_t keepalive = add_saturating(link->last_sent_ns, link->config.keepalive_interval_ns);
    uint64_t silence = add_saturating(link->last_heard_ns, silence_limit_ns(link));
    uint64_t unanswered = add_saturating(link->datagram_since, dead_peer_ns(link));
    if (unanswered < deadline)
        deadline = unanswered;
    if (keepalive < deadline)
        deadline = keepalive;
    if (silence < deadline)
        deadline = silence;
    return deadline;
}

unsigned torus_link_take_events(struct torus_link *link)
{
    unsigned events = link->events;
    link->events = 0;
    return events;
}

const char *torus_link_counter_name(enum torus_link_counter counter)
{
    if ((unsigned)counter >= TORUS_LINK_COUNTER_COUNT)
        return "?";
    return counter_names[counter];
}

const char *torus_link_verdict_name(enum torus_link_verdict verdict)
{
    if ((unsigned)verdict >= TORUS_LINK_VERDICT_COUNT)
        return "?";
    return verdict_names[verdict];
}

const char *torus_link_state_name(enum torus_link_state state)
{
    if ((unsigned)state >= sizeof(state_names) / sizeof(state_names[0]))
        return "?";
    return state_names[state];
}
