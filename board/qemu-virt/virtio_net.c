/*
 * Link driver for the qemu-virt board: one virtio-net device per torus link
 * on the virtio-mmio transport, version 2 ("modern"; the launcher starts
 * QEMU with -global virtio-mmio.force-legacy=false).  Polled, no interrupt
 * handlers: each device's GIC interrupt is enabled only so that it ends the
 * node's WFI (board/qemu-virt/board_irq.h).
 *
 * Link identity.  Every NIC carries the MAC the launcher gave it,
 * 02:74:RR:RR:RR:LL (net/torus/frame.h): RR is the rank of the node it
 * belongs to, LL the torus link it is.  The driver takes the link from the
 * MAC, never from the slot or the order of discovery, and refuses to start
 * (one line naming the slot and the MAC) when a MAC is not a tori link MAC,
 * names another node, names a link this node does not have in its geometry,
 * or names a link another slot already has.  Devices of other kinds are
 * ignored.
 *
 * Queues.  Per link a receive queue (0) and a transmit queue (1), split
 * virtqueues of QUEUE_SIZE descriptors (fewer if the device offers fewer),
 * one descriptor per buffer, each buffer the 12-byte virtio-net header
 * followed by the frame (VIRTIO_F_VERSION_1 allows any layout).  All memory
 * is static.  Receive buffers hold the largest Ethernet frame, because QEMU
 * silently drops a frame larger than the buffer: a frame above
 * CONFIG_MAX_FRAME then arrives and is counted, instead of vanishing.  Every
 * receive descriptor stays posted; it is posted again as soon as its frame
 * is copied out.  Transmit descriptors come from a free stack; used ones are
 * reclaimed on every send.
 *
 * Interrupts.  The receive queue interrupts (that wakes the idle node); the
 * transmit queue does not (VIRTQ_AVAIL_F_NO_INTERRUPT), except while it is
 * full, so that an idle node wakes when there is room again.  When the
 * receive queue looks empty, the driver acknowledges InterruptStatus and
 * looks once more: the device's level interrupt is then low when the node
 * goes idle (else WFI returns at once and the node spins), and whatever
 * arrived around the acknowledgement is still seen.
 *
 * Trust.  Used-ring indexes, descriptor ids and lengths come from the
 * device; each is checked before use, and a bad one is counted and skipped.
 *
 * Memory.  RAM is Normal non-cacheable (board/qemu-virt/mmu.h): no cache
 * maintenance, only ordering.  dmb orders ring and buffer accesses among
 * themselves; dsb (virtio_mmio_barrier) completes them before a register
 * access.  Guest physical addresses are the pointers (identity map).
 */
#include "net/torus/driver.h"

#include <string.h>

#include "board/qemu-virt/board_irq.h"
#include "board/qemu-virt/virtio_mmio.h"
#include "lib/format.h"
#include "net/torus/frame.h"

#define QUEUE_SIZE CONFIG_RING_SIZE
#define QUEUE_RECEIVE 0u
#define QUEUE_TRANSMIT 1u

#define NET_HEADER_SIZE VIRTIO_NET_HEADER_SIZE_MODERN
/* Largest Ethernet frame without FCS; CONFIG_MAX_FRAME is at most this. */
#define ETHERNET_MAX_FRAME 1514u
/* Buffer sizes rounded up to 8 bytes so that every buffer starts aligned. */
#define ROUND_UP_8(n) (((n) + 7u) & ~7u)
#define RECEIVE_BUFFER_SIZE ROUND_UP_8(NET_HEADER_SIZE + ETHERNET_MAX_FRAME)
#define TRANSMIT_BUFFER_SIZE ROUND_UP_8(NET_HEADER_SIZE + CONFIG_MAX_FRAME)

/* Split virtqueue flags (virtio 1.1, 2.6). */
#define VIRTQ_DESC_F_WRITE 2u
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1u
#define VIRTQ_USED_F_NO_NOTIFY 1u

#define VIRTIO_NET_F_MAC (1u << VIRTIO_NET_F_MAC_BIT)
#define VIRTIO_F_VERSION_1_HIGH (1u << (VIRTIO_F_VERSION_1_BIT - 32u))

/* Bounded waits on the device (QEMU answers at once; hardware might not). */
#define RESET_POLL_LIMIT 1000u
#define CONFIG_READ_ATTEMPTS 4u

_Static_assert(QUEUE_SIZE <= 32768, "a split virtqueue has at most 32768 entries");
_Static_assert(CONFIG_MAX_FRAME <= ETHERNET_MAX_FRAME,
               "receive buffers are sized for Ethernet frames");

/* The device-shared part of a split virtqueue (virtio 1.1, 2.6). */
struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    volatile uint16_t flags;
    volatile uint16_t idx;
    volatile uint16_t ring[QUEUE_SIZE];
    volatile uint16_t used_event; /* unused: VIRTIO_F_EVENT_IDX not taken */
};

struct virtq_used_elem {
    volatile uint32_t id;
    volatile uint32_t len;
};

struct virtq_used {
    volatile uint16_t flags;
    volatile uint16_t idx;
    struct virtq_used_elem ring[QUEUE_SIZE];
    volatile uint16_t avail_event;
};

/* One virtqueue: shared rings (aligned as virtio 1.1, 2.6 requires) and the
 * driver's own bookkeeping. */
struct virtq {
    _Alignas(16) struct virtq_desc desc[QUEUE_SIZE];
    _Alignas(4) struct virtq_avail avail;
    _Alignas(4) struct virtq_used used;
    uint16_t size;      /* entries in use: a power of two <= QUEUE_SIZE */
    uint16_t next_avail;   /* avail.idx as the driver last wrote it */
    uint16_t last_used;    /* used.idx up to which entries are consumed */
    bool device_owns[QUEUE_SIZE]; /* descriptor handed to the device */
};

struct virtio_net_link {
    bool present;
    struct virtio_mmio_device device;
    struct virtq receive;
    struct virtq transmit;
    uint16_t transmit_free[QUEUE_SIZE]; /* stack of free transmit ids */
    uint16_t transmit_free_count;
    struct torus_driver_counters counters;
};

static struct virtio_net_link links[CONFIG_MAX_LINKS];
static _Alignas(8) uint8_t receive_buffers[CONFIG_MAX_LINKS][QUEUE_SIZE][RECEIVE_BUFFER_SIZE];
static _Alignas(8) uint8_t transmit_buffers[CONFIG_MAX_LINKS][QUEUE_SIZE][TRANSMIT_BUFFER_SIZE];
/* Static rather than on the stack: the stack is bounded and certified. */
static struct virtio_mmio_device found_devices[QEMU_VIRT_VIRTIO_MMIO_SLOTS];

const char *torus_driver_name(void)
{
    return "virtio-net";
}

static inline void memory_barrier(void)
{
    __asm__ volatile("dmb sy" : : : "memory");
}

static inline uint32_t address_of(const void *pointer)
{
    return (uint32_t)(uintptr_t)pointer;
}

/* ---- The one-line error (no printf: it may allocate) ---- */

static char error_text[192];
static unsigned error_length;

static void error_put(const char *text)
{
    while (*text != '\0' && error_length + 1 < sizeof error_text)
        error_text[error_length++] = *text++;
    error_text[error_length] = '\0';
}

static void error_put_u64(uint64_t value)
{
    char digits[20];
    unsigned n = format_u64(digits, value);
    for (unsigned i = 0; i < n && error_length + 1 < sizeof error_text; i++)
        error_text[error_length++] = digits[i];
    error_text[error_length] = '\0';
}

static void error_put_mac(const uint8_t mac[TORUS_FRAME_MAC_SIZE])
{
    static const char hex[] = "0123456789abcdef";
    char text[3 * TORUS_FRAME_MAC_SIZE];
    for (unsigned i = 0; i < TORUS_FRAME_MAC_SIZE; i++) {
        text[3 * i] = hex[mac[i] >> 4];
        text[3 * i + 1] = hex[mac[i] & 0xFu];
        text[3 * i + 2] = i + 1 < TORUS_FRAME_MAC_SIZE ? ':' : '\0';
    }
    error_put(text);
}

/* Starts "virtio-net: slot N" and returns the buffer for the caller's tail. */
static void error_begin(unsigned slot)
{
    error_length = 0;
    error_text[0] = '\0';
    error_put("virtio-net: slot ");
    error_put_u64(slot);
}

static bool fail(const struct virtio_mmio_device *device, const char **error)
{
    /* Tell the device the driver gave up on it. */
    virtio_mmio_write(device, VIRTIO_MMIO_STATUS, VIRTIO_STATUS_FAILED);
    *error = error_text;
    return false;
}

/* ---- Device bring-up (virtio 1.1, 3.1.1 and 4.2.3) ---- */

static void status_set(const struct virtio_mmio_device *device, uint32_t bits)
{
    uint32_t status = virtio_mmio_read(device, VIRTIO_MMIO_STATUS);
    virtio_mmio_write(device, VIRTIO_MMIO_STATUS, status | bits);
}

static bool device_reset(const struct virtio_mmio_device *device)
{
    virtio_mmio_write(device, VIRTIO_MMIO_STATUS, 0);
    for (unsigned i = 0; i < RESET_POLL_LIMIT; i++)
        if (virtio_mmio_read(device, VIRTIO_MMIO_STATUS) == 0)
            return true;
    return false;
}

/* Takes VIRTIO_F_VERSION_1 and VIRTIO_NET_F_MAC, nothing else. */
static bool negotiate_features(const struct virtio_mmio_device *device,
                               const char **error)
{
    virtio_mmio_write(device, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
    uint32_t high = virtio_mmio_read(device, VIRTIO_MMIO_DEVICE_FEATURES);
    virtio_mmio_write(device, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
    uint32_t low = virtio_mmio_read(device, VIRTIO_MMIO_DEVICE_FEATURES);
    if ((high & VIRTIO_F_VERSION_1_HIGH) == 0) {
        error_begin(device->slot);
        error_put(" does not offer VIRTIO_F_VERSION_1, expected a modern virtio-net device");
        return fail(device, error);
    }
    if ((low & VIRTIO_NET_F_MAC) == 0) {
        error_begin(device->slot);
        error_put(" has no MAC address (VIRTIO_NET_F_MAC), expected one set by the "
                  "launcher (mac=02:74:RR:RR:RR:LL)");
        return fail(device, error);
    }
    virtio_mmio_write(device, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
    virtio_mmio_write(device, VIRTIO_MMIO_DRIVER_FEATURES, VIRTIO_F_VERSION_1_HIGH);
    virtio_mmio_write(device, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
    virtio_mmio_write(device, VIRTIO_MMIO_DRIVER_FEATURES, VIRTIO_NET_F_MAC);
    status_set(device, VIRTIO_STATUS_FEATURES_OK);
    if ((virtio_mmio_read(device, VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK) == 0) {
        error_begin(device->slot);
        error_put(" refused features VERSION_1 and MAC, expected it to accept them");
        return fail(device, error);
    }
    return true;
}

/* Reads the MAC, again if the configuration changed while reading. */
static void read_mac(const struct virtio_mmio_device *device,
                     uint8_t mac[TORUS_FRAME_MAC_SIZE])
{
    for (unsigned attempt = 0; attempt < CONFIG_READ_ATTEMPTS; attempt++) {
        uint32_t generation = virtio_mmio_read(device, VIRTIO_MMIO_CONFIG_GENERATION);
        for (unsigned i = 0; i < TORUS_FRAME_MAC_SIZE; i++)
            mac[i] = virtio_mmio_read_config8(device, VIRTIO_NET_CONFIG_MAC + i);
        if (virtio_mmio_read(device, VIRTIO_MMIO_CONFIG_GENERATION) == generation)
            return;
    }
}

/* Which link this NIC is, from its MAC; false (with the error) if none. */
static bool identify_link(const struct virtio_mmio_device *device,
                          const uint8_t mac[TORUS_FRAME_MAC_SIZE],
                          const struct torus_geometry *geometry, uint32_t rank,
                          unsigned *link, const char **error)
{
    uint32_t mac_rank = 0;
    unsigned mac_link = 0;
    error_begin(device->slot);
    error_put(" has MAC ");
    error_put_mac(mac);
    if (!torus_frame_mac_parse(mac, &mac_rank, &mac_link)) {
        error_put(", expected a tori link MAC 02:74:RR:RR:RR:LL (rank, link < ");
        error_put_u64(CONFIG_MAX_LINKS);
        error_put(")");
        return fail(device, error);
    }
    if (mac_rank != rank) {
        error_put(" naming node ");
        error_put_u64(mac_rank);
        error_put(", expected this node (");
        error_put_u64(rank);
        error_put(")");
        return fail(device, error);
    }
    if ((torus_geometry_link_mask(geometry, rank) & (1u << mac_link)) == 0) {
        error_put(" naming link ");
        error_put(torus_geometry_link_name(mac_link));
        error_put(", which node ");
        error_put_u64(rank);
        error_put(" does not have in its torus");
        return fail(device, error);
    }
    if (links[mac_link].present) {
        error_put(" naming link ");
        error_put(torus_geometry_link_name(mac_link));
        error_put(", expected one NIC per link but slot ");
        error_put_u64(links[mac_link].device.slot);
        error_put(" has it too");
        return fail(device, error);
    }
    *link = mac_link;
    return true;
}

/* Sets up one queue's shared memory and hands it to the device. */
static bool queue_start(const struct virtio_mmio_device *device, struct virtq *queue,
                        unsigned index, const char **error)
{
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_SEL, index);
    uint32_t maximum = virtio_mmio_read(device, VIRTIO_MMIO_QUEUE_NUM_MAX);
    if (maximum == 0 || virtio_mmio_read(device, VIRTIO_MMIO_QUEUE_READY) != 0) {
        error_begin(device->slot);
        error_put(index == QUEUE_RECEIVE ? " has no usable receive queue"
                                         : " has no usable transmit queue");
        error_put(", expected virtio-net queues 0 and 1");
        return fail(device, error);
    }
    uint32_t size = QUEUE_SIZE;
    while (size > maximum)
        size /= 2; /* split queue sizes are powers of two */
    queue->size = (uint16_t)size;
    queue->next_avail = 0;
    queue->last_used = 0;
    for (unsigned i = 0; i < QUEUE_SIZE; i++) {
        queue->desc[i].addr = 0;
        queue->desc[i].len = 0;
        queue->desc[i].flags = 0;
        queue->desc[i].next = 0;
        queue->avail.ring[i] = 0;
        queue->used.ring[i].id = 0;
        queue->used.ring[i].len = 0;
        queue->device_owns[i] = false;
    }
    queue->avail.flags = 0;
    queue->avail.idx = 0;
    queue->avail.used_event = 0;
    queue->used.flags = 0;
    queue->used.idx = 0;
    queue->used.avail_event = 0;
    virtio_mmio_barrier(); /* the rings are in place before the device sees them */
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_NUM, size);
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DESC_LOW, address_of(queue->desc));
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DRIVER_LOW, address_of(&queue->avail));
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DEVICE_LOW, address_of(&queue->used));
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
    virtio_mmio_write(device, VIRTIO_MMIO_QUEUE_READY, 1);
    return true;
}

static uint8_t *receive_buffer(unsigned link, unsigned id)
{
    return receive_buffers[link][id];
}

/* Gives receive descriptor id (back) to the device; no notification. */
static void receive_post(unsigned link, uint16_t id)
{
    struct virtq *queue = &links[link].receive;
    queue->desc[id].addr = address_of(receive_buffer(link, id));
    queue->desc[id].len = RECEIVE_BUFFER_SIZE;
    queue->desc[id].flags = VIRTQ_DESC_F_WRITE;
    queue->desc[id].next = 0;
    queue->device_owns[id] = true;
    queue->avail.ring[queue->next_avail & (queue->size - 1u)] = id;
    memory_barrier(); /* descriptor and ring entry before the index */
    queue->next_avail++;
    queue->avail.idx = queue->next_avail;
}

/* Notifies the device about new available buffers unless it said it polls. */
static void queue_notify(const struct virtio_net_link *l, const struct virtq *queue,
                         unsigned index)
{
    virtio_mmio_barrier(); /* the new index is visible before flags are read */
    if ((queue->used.flags & VIRTQ_USED_F_NO_NOTIFY) == 0)
        virtio_mmio_write(&l->device, VIRTIO_MMIO_QUEUE_NOTIFY, index);
}

static bool link_start(unsigned link, const struct virtio_mmio_device *device,
                       const char **error)
{
    struct virtio_net_link *l = &links[link];
    if (!queue_start(device, &l->receive, QUEUE_RECEIVE, error) ||
        !queue_start(device, &l->transmit, QUEUE_TRANSMIT, error))
        return false;
    l->device = *device;
    memset(&l->counters, 0, sizeof l->counters);
    for (uint16_t id = 0; id < l->receive.size; id++)
        receive_post(link, id);
    struct virtq *transmit = &l->transmit;
    transmit->avail.flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
    l->transmit_free_count = 0;
    for (uint16_t id = 0; id < transmit->size; id++)
        l->transmit_free[l->transmit_free_count++] = id;
    status_set(device, VIRTIO_STATUS_DRIVER_OK);
    if ((virtio_mmio_read(device, VIRTIO_MMIO_STATUS) &
         (VIRTIO_STATUS_DEVICE_NEEDS_RESET | VIRTIO_STATUS_FAILED)) != 0) {
        error_begin(device->slot);
        error_put(" failed after DRIVER_OK, expected a working virtio-net device");
        return fail(device, error);
    }
    if (!board_irq_enable(device->irq)) {
        error_begin(device->slot);
        error_put(": the GIC lacks its interrupt ");
        error_put_u64(device->irq);
        error_put(", expected QEMU's virt machine");
        return fail(device, error);
    }
    l->present = true;
    queue_notify(l, &l->receive, QUEUE_RECEIVE);
    return true;
}

/* Brings up one NIC: features, identity from its MAC, queues. */
static bool device_start(const struct virtio_mmio_device *device,
                         const struct torus_geometry *geometry, uint32_t rank,
                         uint32_t *link_mask, const char **error)
{
    if (device->version != VIRTIO_MMIO_VERSION_MODERN) {
        error_begin(device->slot);
        error_put(" is a legacy virtio-mmio device (version ");
        error_put_u64(device->version);
        error_put("), expected version 2 (QEMU option -global "
                  "virtio-mmio.force-legacy=false)");
        *error = error_text;
        return false;
    }
    if (!device_reset(device)) {
        error_begin(device->slot);
        error_put(" does not reset (status stays non-zero), expected a virtio-net device");
        return fail(device, error);
    }
    status_set(device, VIRTIO_STATUS_ACKNOWLEDGE);
    status_set(device, VIRTIO_STATUS_DRIVER);
    if (!negotiate_features(device, error))
        return false;
    uint8_t mac[TORUS_FRAME_MAC_SIZE];
    read_mac(device, mac);
    unsigned link = 0;
    if (!identify_link(device, mac, geometry, rank, &link, error) ||
        !link_start(link, device, error))
        return false;
    *link_mask |= 1u << link;
    return true;
}

bool torus_driver_init(const struct torus_geometry *geometry, uint32_t rank,
                       uint32_t *link_mask, const char **error)
{
    *link_mask = 0;
    for (unsigned link = 0; link < CONFIG_MAX_LINKS; link++) {
        links[link].present = false;
        memset(&links[link].counters, 0, sizeof links[link].counters);
    }
    unsigned count = virtio_mmio_find(VIRTIO_DEVICE_ID_NET, found_devices,
                                      QEMU_VIRT_VIRTIO_MMIO_SLOTS);
    if (count > QEMU_VIRT_VIRTIO_MMIO_SLOTS)
        count = QEMU_VIRT_VIRTIO_MMIO_SLOTS;
    for (unsigned i = 0; i < count; i++)
        if (!device_start(&found_devices[i], geometry, rank, link_mask, error))
            return false;
    return true;
}

/* ---- Running ---- */

/* Drops the device's interrupt line (see the top of this file). */
static void acknowledge_interrupt(const struct virtio_net_link *l)
{
    uint32_t status = virtio_mmio_read(&l->device, VIRTIO_MMIO_INTERRUPT_STATUS);
    if (status != 0)
        virtio_mmio_write(&l->device, VIRTIO_MMIO_INTERRUPT_ACK, status);
    virtio_mmio_barrier(); /* rings are read after the acknowledgement */
}

/*
 * How many used entries wait in a queue.  A device claiming more than the
 * queue holds is broken: that is counted, and its claim skipped.
 */
static uint16_t used_pending(struct virtq *queue, uint64_t *bad_counter)
{
    uint16_t used = queue->used.idx;
    memory_barrier(); /* entries are read after the index that covers them */
    uint16_t pending = (uint16_t)(used - queue->last_used);
    if (pending > queue->size) {
        (*bad_counter)++;
        queue->last_used = used;
        return 0;
    }
    return pending;
}

/* Takes the next used entry; false (counted) when its id is not one the
 * device holds. */
static bool used_take(struct virtq *queue, uint16_t *id, uint32_t *length,
                      uint64_t *bad_counter)
{
    const struct virtq_used_elem *element =
        &queue->used.ring[queue->last_used & (queue->size - 1u)];
    uint32_t used_id = element->id;
    *length = element->len;
    queue->last_used++;
    if (used_id >= queue->size || !queue->device_owns[used_id]) {
        (*bad_counter)++;
        return false;
    }
    queue->device_owns[used_id] = false;
    *id = (uint16_t)used_id;
    return true;
}

size_t torus_driver_receive(unsigned link, uint8_t *buffer, size_t capacity)
{
    if (link >= CONFIG_MAX_LINKS || !links[link].present)
        return 0;
    struct virtio_net_link *l = &links[link];
    struct virtq *queue = &l->receive;
    uint64_t *drops = &l->counters.receive_drops;
    if (used_pending(queue, drops) == 0) {
        acknowledge_interrupt(l);
        if (used_pending(queue, drops) == 0)
            return 0;
    }
    /* Bounded: bad entries are skipped, at most one queue's worth per call. */
    size_t received = 0;
    bool reposted = false;
    for (unsigned i = 0; i < queue->size && used_pending(queue, drops) > 0; i++) {
        uint16_t id = 0;
        uint32_t length = 0;
        if (!used_take(queue, &id, &length, drops))
            continue;
        size_t frame_length = length >= NET_HEADER_SIZE ? length - NET_HEADER_SIZE : 0;
        bool good = length >= NET_HEADER_SIZE && length <= RECEIVE_BUFFER_SIZE &&
                    frame_length > 0 && frame_length <= CONFIG_MAX_FRAME &&
                    frame_length <= capacity && buffer != NULL;
        if (good)
            memcpy(buffer, receive_buffer(link, id) + NET_HEADER_SIZE, frame_length);
        receive_post(link, id);
        reposted = true;
        if (good) {
            l->counters.received++;
            received = frame_length;
            break;
        }
        (*drops)++;
    }
    if (reposted)
        queue_notify(l, queue, QUEUE_RECEIVE);
    return received;
}

/* Frees the transmit descriptors the device is done with. */
static void transmit_reclaim(struct virtio_net_link *l)
{
    struct virtq *queue = &l->transmit;
    uint64_t *errors = &l->counters.send_errors;
    uint16_t pending = used_pending(queue, errors);
    for (uint16_t i = 0; i < pending; i++) {
        uint16_t id = 0;
        uint32_t length = 0;
        if (used_take(queue, &id, &length, errors) &&
            l->transmit_free_count < queue->size)
            l->transmit_free[l->transmit_free_count++] = id;
    }
}

bool torus_driver_send(unsigned link, const uint8_t *frame, size_t length)
{
    if (link >= CONFIG_MAX_LINKS || !links[link].present)
        return true; /* no cable: the frame is lost, as on hardware */
    struct virtio_net_link *l = &links[link];
    if (frame == NULL || length == 0 || length > CONFIG_MAX_FRAME) {
        l->counters.send_errors++; /* no retry can make it fit */
        return true;
    }
    struct virtq *queue = &l->transmit;
    transmit_reclaim(l);
    if (l->transmit_free_count == 0) {
        /* Full: let the device wake the node when a buffer comes back. */
        queue->avail.flags = 0;
        virtio_mmio_barrier();
        transmit_reclaim(l);
        if (l->transmit_free_count == 0) {
            l->counters.send_busy++;
            return false;
        }
    }
    if (queue->avail.flags == 0)
        queue->avail.flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
    uint16_t id = l->transmit_free[--l->transmit_free_count];
    uint8_t *buffer = transmit_buffers[link][id];
    memset(buffer, 0, NET_HEADER_SIZE); /* no offloads: an all-zero header */
    memcpy(buffer + NET_HEADER_SIZE, frame, length);
    queue->desc[id].addr = address_of(buffer);
    queue->desc[id].len = (uint32_t)(NET_HEADER_SIZE + length);
    queue->desc[id].flags = 0;
    queue->desc[id].next = 0;
    queue->device_owns[id] = true;
    queue->avail.ring[queue->next_avail & (queue->size - 1u)] = id;
    memory_barrier(); /* buffer, descriptor and ring entry before the index */
    queue->next_avail++;
    queue->avail.idx = queue->next_avail;
    queue_notify(l, queue, QUEUE_TRANSMIT);
    l->counters.sent++;
    return true;
}

const struct torus_driver_counters *torus_driver_counters(unsigned link)
{
    static const struct torus_driver_counters none;
    return link < CONFIG_MAX_LINKS ? &links[link].counters : &none;
}
