/*
 * Link-level reliability for one torus link, as a pure state machine (one
 * struct torus_link per link end; time comes in as now_ns).
 *
 * Goal: the layer above sees every data frame once and in order, or sees
 * the link declared DOWN.  Links lose frames (a stopped or dead peer, UDP
 * buffer overflow) and a stopped-then-resumed peer delivers stale frames;
 * measured links do not reorder.
 *
 * Go-back-N, chosen over selective repeat: losses are rare bursts on an
 * otherwise ordered link, so resending the (small) window costs little,
 * while the receiver then needs no reorder buffer at all (selective repeat
 * would add CONFIG_LINK_WINDOW * CONFIG_MAX_FRAME bytes per link) and its
 * logic stays a single "expected" counter.  The receiver drops and counts
 * out-of-order frames and duplicates; on the first gap it sends a NAK so the
 * sender resends at once instead of waiting for its timeout.
 *
 * Sequence numbers are per session, from 0, 32-bit and compared modulo
 * 2^32.  Acks are cumulative (the next sequence number expected), carried in
 * every frame: piggybacked on data, or in LINK_ACK frames sent when an ack is
 * owed (after ack_delay_ns, or at once for a duplicate, a gap, or half a
 * window unacknowledged).  The sender keeps a copy of every unacknowledged
 * frame (CONFIG_LINK_WINDOW of them); when the oldest stays unacknowledged
 * for rto_ns it resends them all; after retry_limit such resends without
 * progress, one more rto_ns later, the link is DOWN.  So a dead peer is
 * declared down at most (retry_limit + 1) * rto_ns after the last progress
 * (plus the caller's tick lateness).
 *
 * Sessions and resynchronisation.  Each link end has an incarnation, a
 * 32-bit session id, never 0, that it changes (+1) every time its session
 * ends (DOWN, or the peer restarted).  Every frame carries the sender's
 * incarnation and the incarnation it believes the receiver has (0: none).
 * A session is UP between two ends that each hold the other's current
 * incarnation; a non-SYN frame is accepted only with both incarnations
 * matching, so frames of an earlier session - the stale traffic of a
 * stopped-then-resumed peer, the last frames of a crashed one - are dropped
 * and counted as stale, however plausible their sequence numbers.
 *
 * Handshake (SYN: a LINK_ACK frame with the SYN flag; "A(a,b)" is a frame
 * from A saying "I am a, you are b"):
 *   A SYN(a,0) -> B learns a, replies SYN(b,a) -> A learns b; its own name
 *   came back, so A is UP and replies ACK(a,b) -> B: a matching frame, UP.
 * Until UP an end resends SYN every probe_interval_ns; a DOWN link keeps
 * probing the same way, so it comes back UP as soon as the peer is heard
 * again.  Frames queued when a session ends are discarded and counted: the
 * layer above learns of the loss through the DOWN event.
 *
 * Incarnations only grow (+1 per session end; a restart starts from its
 * boot incarnation << 16, and boot incarnations grow with every start and
 * reset), compared modulo 2^32 like sequence numbers.  The rule for a SYN
 * (s, r) that reaches an end holding (L, P):
 *   - not UP: learn P = s whatever it is; UP if r == L (ack at once), else
 *     teach L at once with a SYN;
 *   - UP, s == P: the peer is still handshaking: ack (or teach, r != L);
 *   - UP, s newer than P: the peer ended the session we share, whoever it
 *     now addresses (a restart: r = 0; its end of a session that a forged
 *     or lost frame broke: any r): end ours (DOWN) and handshake with s;
 *   - UP, s older than P: a handshake of an earlier session (stale,
 *     duplicated, reordered, replayed): dropped, counted stale.
 * Datagrams (issue 20).  A data frame sent with TORUS_FRAME_FLAG_DATAGRAM
 * (a heartbeat, whose loss the next one makes good) goes out once: it takes
 * no place in the data sequence, no window slot and owes no ack, and the
 * receiver hands it up when its incarnations match the session, whatever
 * data came before it.  Datagrams have their own sequence numbers, per
 * session from 0: the receiver takes only one newer than the last it took
 * (links do not reorder, so only a replay is older), so that a recorded
 * datagram sent again - a dead node's heartbeat - is dropped as a
 * duplicate, as a data frame would be.
 *
 * A datagram owes the sender a sign of life, lazily: the receiver sends a
 * LINK_ACK within a quarter of the dead-peer bound, (retry_limit + 1) *
 * rto_ns / 4, unless any frame of its own leaves on the link first (on an
 * idle torus the peer's own heartbeat, so no extra frame).  A sender that
 * has heard nothing of the session for (retry_limit + 1) * rto_ns since
 * its first datagram left unanswered declares the link DOWN, as it would
 * for an unacknowledged data frame: a cut cable that carries only
 * heartbeats is found as fast as one that carries data, before the
 * detector's timeout, and routes go around it.  It still carries the current ack (paying one that is owed) and
 * is heard as the session's, so heartbeats also serve as keepalives.  An
 * idle torus whose heartbeats cross each link both ways then costs one
 * frame per heartbeat and hop, not two, and no timer wake-up to send the
 * ack (the lazy answer below rides on the peer's own heartbeat).
 *
 * Keepalives: an UP end that has sent nothing for keepalive_interval_ns
 * sends an ACK (no SYN; none while traffic flows), so an idle link is heard
 * at least every interval; an UP end that hears nothing of its session (no
 * frame with both incarnations matching, no SYN(P, L)) for
 * (retry_limit + 1) keepalive intervals ends it (DOWN, counted "silences").
 * That is what undoes any one-sided session a SYN can leave behind - for
 * example one forged with a plausible newer incarnation that made one end
 * of an idle twin cable start over while the other stayed UP (issue 20):
 * the first end's probes, newer than what the UP end holds, end its session
 * at once; were they older, its silence would.
 *
 * The bound.  Once stale and forged frames stop (at t0) and the channel
 * delivers within d, both ends are UP in one session, or both DOWN if the
 * channel stays dead, by
 *   t0 + (retry_limit + 1) * keepalive_interval_ns + probe_interval_ns + 3d
 * (plus the caller's tick lateness): an UP end not in the peer's session
 * hears nothing of it and is DOWN by the silence limit; two ends that are
 * not UP exchange probes and finish the handshake within one probe interval
 * and three deliveries; nothing then disturbs a matching session.
 *
 * Pure: no I/O, no clock reads, no globals, no allocation.
 */
#ifndef NET_TORUS_LINK_H
#define NET_TORUS_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/tori_config.h"
#include "net/torus/frame.h"

#define TORUS_LINK_NEVER UINT64_MAX

enum torus_link_state {
    TORUS_LINK_SYNCING, /* never up yet: handshaking */
    TORUS_LINK_UP,
    TORUS_LINK_DOWN, /* was up; the session ended; probing */
};

/* Event bits, collected until torus_link_take_events. */
#define TORUS_LINK_EVENT_UP 0x1u
#define TORUS_LINK_EVENT_DOWN 0x2u
/* More than lossy_retransmits frames resent within lossy_window_ns (a
 * network fault, issue 15): raised once per window. */
#define TORUS_LINK_EVENT_LOSSY 0x4u

/* What torus_link_receive says about a frame. */
#define TORUS_LINK_VERDICTS(X)                                               \
    X(DELIVER, "deliver")           /* new, in order: hand it up */          \
    X(CONTROL, "control")           /* a LINK_ACK, consumed by the link */   \
    X(DUPLICATE, "duplicate")       /* already delivered: dropped */         \
    X(OUT_OF_ORDER, "out_of_order") /* after a gap: dropped */               \
    X(STALE, "stale")               /* another session's: dropped */         \
    X(WRONG_PEER, "wrong_peer")     /* MACs are not this link's */           \
    X(PROTOCOL, "protocol")         /* SYN on a data frame, or a LINK_ACK  \
                                       that says DATAGRAM: dropped */

enum torus_link_verdict {
#define TORUS_LINK_VERDICT_ENUM(name, text) TORUS_LINK_##name,
    TORUS_LINK_VERDICTS(TORUS_LINK_VERDICT_ENUM)
#undef TORUS_LINK_VERDICT_ENUM
    TORUS_LINK_VERDICT_COUNT
};

enum torus_link_send_status {
    TORUS_LINK_SEND_OK = 0,
    TORUS_LINK_SEND_WINDOW_FULL, /* CONFIG_LINK_WINDOW frames unacknowledged */
    TORUS_LINK_SEND_NOT_UP,      /* no session: route around or drop */
    TORUS_LINK_SEND_BAD_FRAME,   /* not well formed, or a LINK_ACK */
};

/* Counters, one list for the enum and the names. */
#define TORUS_LINK_COUNTERS(X)                                               \
    X(SENT, "sent")                     /* data frames accepted by send */   \
    X(DATAGRAMS_SENT, "datagrams_sent") /* of them, datagrams (not kept) */  \
    X(DATAGRAMS, "datagrams")           /* datagrams handed up */            \
    X(RETRANSMITTED, "retransmitted")   /* data frames sent again */         \
    X(TIMEOUTS, "timeouts")             /* retransmission timeouts */        \
    X(FAST_RETRANSMITS, "fast_retransmits") /* resends on a NAK */           \
    X(DELIVERED, "delivered")                                                \
    X(DUPLICATES, "duplicates")                                              \
    X(OUT_OF_ORDER, "out_of_order")                                          \
    X(STALE, "stale")                                                        \
    X(WRONG_PEER, "wrong_peer")                                              \
    X(PROTOCOL, "protocol")                                                  \
    X(BAD_ACKS, "bad_acks")             /* acks beyond what was sent */      \
    X(ACKS_SENT, "acks_sent")           /* LINK_ACK frames without SYN */    \
    X(SYNS_SENT, "syns_sent")                                                \
    X(ACKS_RECEIVED, "acks_received")   /* acks that advanced the window */  \
    X(FRAMES_ACKED, "frames_acked")                                          \
    X(WINDOW_FULL, "window_full")       /* send refusals */                  \
    X(NOT_UP, "not_up")                 /* send refusals */                  \
    X(BAD_FRAMES, "bad_frames")         /* send refusals */                  \
    X(DISCARDED, "discarded")           /* unacked frames lost at DOWN */    \
    X(UP_EVENTS, "up_events")                                                \
    X(DOWN_EVENTS, "down_events")                                            \
    X(PEER_RESETS, "peer_resets")       /* DOWN: the peer had a newer session */ \
    X(KEEPALIVES, "keepalives")         /* ACKs sent because the link idled */  \
    X(SILENCES, "silences")             /* DOWN: the session went unheard */ \
    X(LOSSY_EVENTS, "lossy_events")     /* windows over the resend limit */

enum torus_link_counter {
#define TORUS_LINK_COUNTER_ENUM(name, text) TORUS_LINK_COUNT_##name,
    TORUS_LINK_COUNTERS(TORUS_LINK_COUNTER_ENUM)
#undef TORUS_LINK_COUNTER_ENUM
    TORUS_LINK_COUNTER_COUNT
};

struct torus_link_config {
    uint32_t local_rank;
    uint32_t peer_rank;
    unsigned local_link;        /* link number here; the peer's is ^ 1 */
    uint32_t incarnation;       /* first session id (0 is made 1) */
    uint64_t rto_ns;            /* retransmission timeout, > 0 */
    uint32_t retry_limit;       /* resends without progress before DOWN */
    uint64_t ack_delay_ns;      /* how long an ack may wait for data */
    uint64_t probe_interval_ns; /* SYN period while not UP; 0: rto_ns */
    uint64_t keepalive_interval_ns; /* idle UP link: an ACK this often;
                                       0: TORUS_LINK_KEEPALIVE_RTOS * rto_ns */
    uint32_t lossy_retransmits; /* resends a window may hold; 0: no limit */
    uint64_t lossy_window_ns;   /* that window, opened by its first resend */
    const struct torus_frame_key *key; /* frames are sealed under it; NULL: CRC */
};

/* One window slot: a sent, not yet acknowledged frame. */
struct torus_link_slot {
    uint16_t length;
    uint8_t frame[CONFIG_MAX_FRAME];
};

struct torus_link {
    struct torus_link_config config;
    uint8_t local_mac[TORUS_FRAME_MAC_SIZE];
    uint8_t peer_mac[TORUS_FRAME_MAC_SIZE];
    enum torus_link_state state;
    unsigned events;
    uint32_t local_incarnation;
    uint32_t peer_incarnation; /* 0: not known */
    /* Sending. */
    uint32_t send_base;     /* oldest unacknowledged sequence number */
    uint32_t next_sequence; /* of the next new data frame */
    uint32_t retries;       /* timeouts since the last progress */
    uint64_t rto_deadline;  /* TORUS_LINK_NEVER when nothing is in flight */
    bool resend_now;        /* a NAK asked for the window again */
    bool nak_answered;      /* ... and was answered for this send_base */
    /* Receiving. */
    uint32_t expected;         /* next sequence number to deliver */
    uint32_t ack_sent;         /* last ack value put on the wire */
    bool nak_pending;          /* next frame out carries NAK */
    bool nak_sent;             /* a NAK went out for this gap */
    bool syn_requested;        /* next control frame carries SYN */
    uint64_t control_deadline; /* when a LINK_ACK (or SYN) is due */
    /* Datagrams: the next one's sequence number, and the least one taken. */
    uint32_t datagram_next;
    uint32_t datagram_expected;
    /* When our oldest datagram not yet answered by any frame of the
     * session left; TORUS_LINK_NEVER: none. */
    uint64_t datagram_since;
    /* Keepalives. */
    uint64_t last_sent_ns;  /* any frame of ours put on the wire */
    uint64_t last_heard_ns; /* a frame of the current session, UP only */
    /* Resends in the window that opened at lossy_since_ns. */
    uint64_t lossy_since_ns;
    uint32_t lossy_count;
    bool lossy_told; /* this window's LOSSY event was raised */
    uint64_t counters[TORUS_LINK_COUNTER_COUNT];
    struct torus_link_slot window[CONFIG_LINK_WINDOW];
    uint8_t control[TORUS_FRAME_HEADER_SIZE];
};

/* Frames to put on the wire after a tick.  The pointers point into the
 * link and stay valid until the next call into it: inject them first. */
#define TORUS_LINK_OUTBOX_SIZE (CONFIG_LINK_WINDOW + 1)
struct torus_link_outbox {
    unsigned count;
    const uint8_t *frame[TORUS_LINK_OUTBOX_SIZE];
    uint16_t length[TORUS_LINK_OUTBOX_SIZE];
};

/* The default keepalive interval, in rtos: an idle link costs one 64-byte
 * frame each way per interval, and a one-sided session lasts at most
 * retry_limit + 1 of them. */
#define TORUS_LINK_KEEPALIVE_RTOS 10u

/* The default loss limit: more than 64 frames resent within a second (four
 * whole windows of 16) is a link worth reporting, not a passing burst. */
#define TORUS_LINK_LOSSY_RETRANSMITS 64u
#define TORUS_LINK_LOSSY_WINDOW_NS 1000000000ull

/* rto 20 ms, 5 retries, ack delay 1 ms, probe every rto, keepalive every
 * TORUS_LINK_KEEPALIVE_RTOS rtos, the default loss limit, keyless; ranks,
 * link and incarnation 0 (the caller sets them). */
void torus_link_config_defaults(struct torus_link_config *config);

/* Starts a link in SYNCING (a SYN is due at once).  False, and the link
 * unusable, when rto_ns is 0 or local_link >= CONFIG_MAX_LINKS. */
bool torus_link_init(struct torus_link *link, const struct torus_link_config *config);

/*
 * Sends a data frame (well formed, made by torus_frame_encode or forwarded,
 * any type but LINK_ACK): stamps MACs, sequence, ack and incarnations into
 * frame in place, reseals it and keeps a copy for retransmission - unless it
 * is a datagram (TORUS_FRAME_FLAG_DATAGRAM), which is sent once and never
 * refused for a full window.  On TORUS_LINK_SEND_OK the caller puts frame
 * on the wire; otherwise frame is untouched and nothing is kept.
 */
enum torus_link_send_status torus_link_send(struct torus_link *link, uint8_t *frame,
                                            size_t length, uint64_t now_ns);

/*
 * Takes a frame that torus_frame_decode accepted and that arrived on this
 * link.  TORUS_LINK_DELIVER: hand it up (or route it on); every other
 * verdict: the link consumed or dropped it (counted).
 */
enum torus_link_verdict torus_link_receive(struct torus_link *link,
                                           const struct torus_frame_header *header,
                                           uint64_t now_ns);

/*
 * Does what is due at now_ns: resends after a timeout or a NAK, declares the
 * link DOWN after retry_limit fruitless resends or a silent session, sends
 * an owed ack or SYN, or a keepalive.
 * Fills out (emptied first) with the frames to put on the wire; returns
 * out->count.
 */
unsigned torus_link_tick(struct torus_link *link, uint64_t now_ns,
                         struct torus_link_outbox *out);

/* When torus_link_tick next has work (0: at once), TORUS_LINK_NEVER: none. */
uint64_t torus_link_next_deadline(const struct torus_link *link);

/* Returns the TORUS_LINK_EVENT_* bits raised since the last call, and
 * clears them. */
unsigned torus_link_take_events(struct torus_link *link);

static inline bool torus_link_is_up(const struct torus_link *link)
{
    return link->state == TORUS_LINK_UP;
}
static inline enum torus_link_state torus_link_state(const struct torus_link *link)
{
    return link->state;
}
/* Data frames sent and not yet acknowledged. */
static inline uint32_t torus_link_in_flight(const struct torus_link *link)
{
    return link->next_sequence - link->send_base;
}
static inline uint64_t torus_link_counter(const struct torus_link *link,
                                          enum torus_link_counter counter)
{
    return (unsigned)counter < TORUS_LINK_COUNTER_COUNT ? link->counters[counter] : 0;
}

const char *torus_link_counter_name(enum torus_link_counter counter);
const char *torus_link_verdict_name(enum torus_link_verdict verdict);
const char *torus_link_state_name(enum torus_link_state state);

#endif /* NET_TORUS_LINK_H */
