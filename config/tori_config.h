/*
 * Build-time configuration of tori: the one place where every table size
 * and default comes from.  Each value may be overridden at configure time
 * (cmake -DTORI_MAX_NODES=... and friends pass -DCONFIG_...=...), and every
 * value is checked below so that a bad override fails the build, not a node.
 */
#ifndef TORI_CONFIG_H
#define TORI_CONFIG_H

/* Largest torus (nodes, spares included) an image can run on. */
#ifndef CONFIG_MAX_NODES
#define CONFIG_MAX_NODES 65536
#endif

/* Torus and mesh dimensions supported (BG/Q has 5, Tofu 6). */
#ifndef CONFIG_MAX_DIMS
#define CONFIG_MAX_DIMS 6
#endif

/* Links per node: a plus and a minus direction per dimension. */
#define CONFIG_MAX_LINKS (2 * CONFIG_MAX_DIMS)

/* Membership tree radix used when the personality does not set one. */
#ifndef CONFIG_TREE_RADIX_DEFAULT
#define CONFIG_TREE_RADIX_DEFAULT 4
#endif
#define CONFIG_TREE_RADIX_MAX 16

/* Descriptors in each link's injection and reception ring (power of two). */
#ifndef CONFIG_RING_SIZE
#define CONFIG_RING_SIZE 32
#endif

/* Unacknowledged frames a link keeps for retransmission (power of two). */
#ifndef CONFIG_LINK_WINDOW
#define CONFIG_LINK_WINDOW 16
#endif

/* Largest Ethernet frame on a torus link, headers included (no FCS). */
#ifndef CONFIG_MAX_FRAME
#define CONFIG_MAX_FRAME 1514
#endif

/* Phoenix routing tables (net/torus/route_table.h, `--routing table`): route
 * entries a node keeps (one per destination whose dimension-order routes
 * cross a failed link), and link-change records it keeps (two per failed
 * cable, one from each end). */
#ifndef CONFIG_ROUTE_TABLE_ENTRIES
#define CONFIG_ROUTE_TABLE_ENTRIES 512
#endif
#ifndef CONFIG_ROUTE_TABLE_LINKS
#define CONFIG_ROUTE_TABLE_LINKS 128
#endif

/* The node image's one stack. */
#ifndef CONFIG_STACK_SIZE
#define CONFIG_STACK_SIZE (64 * 1024)
#endif

/* Kernel timers that may be armed at once. */
#ifndef CONFIG_MAX_TIMERS
#define CONFIG_MAX_TIMERS 32
#endif

/* Pollers the kernel poll loop can call. */
#ifndef CONFIG_MAX_POLLERS
#define CONFIG_MAX_POLLERS 8
#endif

/* Console output waiting for an idle moment (kernel/console_output.h): at
 * least the longest event line; a burst beyond it is written inline. */
#ifndef CONFIG_CONSOLE_BUFFER
#define CONFIG_CONSOLE_BUFFER 4096
#endif

/* Heap available to newlib during init (sealed afterwards). */
#ifndef CONFIG_INIT_HEAP_SIZE
#define CONFIG_INIT_HEAP_SIZE (16 * 1024)
#endif

/*
 * The communication layer (comm/, see comm/DESIGN.md for the memory
 * figures).  Communicators alive at once on a node, WORLD included.
 */
#ifndef CONFIG_COMM_MAX_COMMS
#define CONFIG_COMM_MAX_COMMS 8
#endif

/* Peers a node holds a session with at once (sessions are recycled). */
#ifndef CONFIG_COMM_MAX_PEERS
#define CONFIG_COMM_MAX_PEERS 64
#endif

/* Unacknowledged frames per peer (power of two, at most 32: the ack mask). */
#ifndef CONFIG_COMM_WINDOW
#define CONFIG_COMM_WINDOW 16
#endif

/* Application requests pending at once (collectives add their own). */
#ifndef CONFIG_COMM_MAX_REQUESTS
#define CONFIG_COMM_MAX_REQUESTS 128
#endif

/* Largest message, in bytes (point-to-point, broadcast, allgather). */
#ifndef CONFIG_COMM_MAX_MESSAGE
#define CONFIG_COMM_MAX_MESSAGE (1024 * 1024)
#endif

/* Unexpected messages: a pool of blocks, and records of arrival order. */
#ifndef CONFIG_COMM_POOL_BYTES
#define CONFIG_COMM_POOL_BYTES (64 * 1024)
#endif
#ifndef CONFIG_COMM_POOL_BLOCK
#define CONFIG_COMM_POOL_BLOCK 512
#endif
#ifndef CONFIG_COMM_MAX_UNEXPECTED
#define CONFIG_COMM_MAX_UNEXPECTED 64
#endif

/* Collectives in flight at once, the scratch each has (reduce staging,
 * gather of a subtree, split), the largest reduce vector and the tree's
 * radix. */
#ifndef CONFIG_COMM_MAX_COLLECTIVES
#define CONFIG_COMM_MAX_COLLECTIVES 2
#endif
#ifndef CONFIG_COMM_COLL_SCRATCH
#define CONFIG_COMM_COLL_SCRATCH (16 * 1024)
#endif
#ifndef CONFIG_COMM_REDUCE_MAX
#define CONFIG_COMM_REDUCE_MAX 2048
#endif
#ifndef CONFIG_COMM_TREE_RADIX
#define CONFIG_COMM_TREE_RADIX 4
#endif

/* Rank-map entries shared by the communicators that are not a range of
 * node ids (split with reordering keys). */
#ifndef CONFIG_COMM_MAP_ENTRIES
#define CONFIG_COMM_MAP_ENTRIES 4096
#endif

/* Failure semantics (issue 14) in the comm core: 1 (the default) builds
 * every mode (ABORT, BLANK, SHRINK, REBUILD; NOP, CONT), revoke, agree,
 * failure_ack, rebuild, shrink, adoption of spares, strict collectives and
 * the hold of newer-view frames.  0 leaves point-to-point and the plain
 * collective tree: a failure ends the job as ABORT does (MPI's default),
 * the recovery calls return COMM_ERR_UNSUPPORTED, and a job asking for
 * another mode is refused.  It measures what the machinery costs when
 * nothing fails (`./tori bench recovery`; preset host-ft-off). */
#ifndef CONFIG_COMM_FT
#define CONFIG_COMM_FT 1
#endif

/* Failure semantics (issue 14): the group edits one communicator can hold
 * (ranks a SHRINK removed, BLANK gaps, spares a REBUILD adopted).  A
 * rebuilt group is its base (a range of node ids or a rank map) plus these
 * sorted lists, so even a 65,536-rank WORLD rebuilt costs no map. */
#ifndef CONFIG_COMM_FT_MAX_EDITS
#define CONFIG_COMM_FT_MAX_EDITS 32
#endif

/* Frames of a view newer than ours a node keeps (whole, in arrival order)
 * until it installs that view, instead of dropping them for the sender to
 * resend after its timeout (comm/DESIGN.md, "Views and fencing").  Sized
 * by what can come ahead of an install: one frame (a session's OPEN or a
 * round's offer; the next waits for our answer) from each comm-tree
 * neighbour (parent and CONFIG_COMM_TREE_RADIX children) for each round a
 * new view starts (the cut collective's restart, the recovery round, a
 * revoke's flood).  4 overflowed at 16,384 ranks.  0: none kept (tests). */
#define COMM_HOLD_ROUNDS 3
#define COMM_HOLD_NEEDED ((CONFIG_COMM_TREE_RADIX + 1) * COMM_HOLD_ROUNDS)
#ifndef CONFIG_COMM_HOLD_FRAMES
#define CONFIG_COMM_HOLD_FRAMES (CONFIG_COMM_FT ? COMM_HOLD_NEEDED : 0)
#endif

/* Frames one call into the comm core may write (struct comm_outbox). */
#ifndef CONFIG_COMM_OUTBOX_FRAMES
#define CONFIG_COMM_OUTBOX_FRAMES 32
#endif

/* The shipped applications (apps/): pingpong's largest message (both of its
 * buffers), the stencil's largest block edge, the largest grid rank 0
 * recomputes serially (points), and the most ranks it gathers checksums of. */
#ifndef CONFIG_APP_PINGPONG_MAX_BYTES
#define CONFIG_APP_PINGPONG_MAX_BYTES (64 * 1024)
#endif
#ifndef CONFIG_APP_STENCIL_MAX_EDGE
#define CONFIG_APP_STENCIL_MAX_EDGE 8
#endif
#ifndef CONFIG_APP_STENCIL_REFERENCE_POINTS
#define CONFIG_APP_STENCIL_REFERENCE_POINTS 4096
#endif
#ifndef CONFIG_APP_STENCIL_MAX_RANKS
#define CONFIG_APP_STENCIL_MAX_RANKS 1024
#endif

_Static_assert(CONFIG_APP_PINGPONG_MAX_BYTES >= 1 &&
                   CONFIG_APP_PINGPONG_MAX_BYTES <= CONFIG_COMM_MAX_MESSAGE,
               "CONFIG_APP_PINGPONG_MAX_BYTES must be 1..CONFIG_COMM_MAX_MESSAGE");
_Static_assert(CONFIG_APP_STENCIL_MAX_EDGE >= 1 && CONFIG_APP_STENCIL_MAX_EDGE <= 64,
               "CONFIG_APP_STENCIL_MAX_EDGE must be 1..64");
_Static_assert(CONFIG_APP_STENCIL_MAX_RANKS >= 1 &&
                   CONFIG_APP_STENCIL_MAX_RANKS * 8 <= CONFIG_COMM_COLL_SCRATCH,
               "CONFIG_APP_STENCIL_MAX_RANKS checksums of 8 bytes must fit a gather");

/* Checkpoints (issue 15, node/checkpoint.c): the store's bytes (four slots:
 * this rank's last two checkpoints and its ward's, a buddy's copies) and the
 * most ranks of a communicator that checkpoints. */
#ifndef CONFIG_CHECKPOINT_STORE_BYTES
#define CONFIG_CHECKPOINT_STORE_BYTES (128 * 1024)
#endif
#ifndef CONFIG_CHECKPOINT_MAX_RANKS
#define CONFIG_CHECKPOINT_MAX_RANKS 1024
#endif
/* PROMOTE (issue 15): the most ranks a standby spare mirrors (two
 * generations each, in slots of the store's size, and one slot to receive
 * into), and the mirror region that holds them. */
#ifndef CONFIG_CHECKPOINT_MIRROR_RANKS
#define CONFIG_CHECKPOINT_MIRROR_RANKS 8
#endif
#define CONFIG_CHECKPOINT_MIRROR_BYTES \
    ((2 * CONFIG_CHECKPOINT_MIRROR_RANKS + 1) * (CONFIG_CHECKPOINT_STORE_BYTES / 4))
_Static_assert(CONFIG_CHECKPOINT_MIRROR_RANKS >= 1 && CONFIG_CHECKPOINT_MIRROR_RANKS <= 64,
               "CONFIG_CHECKPOINT_MIRROR_RANKS must be 1..64");
_Static_assert(CONFIG_CHECKPOINT_STORE_BYTES >= 4096 && CONFIG_CHECKPOINT_STORE_BYTES % 64 == 0,
               "CONFIG_CHECKPOINT_STORE_BYTES must be >= 4 KiB and a multiple of 64");
_Static_assert(CONFIG_CHECKPOINT_MAX_RANKS >= 1 &&
                   (CONFIG_CHECKPOINT_MAX_RANKS / 62 + 1) * 8 <= CONFIG_COMM_COLL_SCRATCH,
               "the checkpoint's bitmap of ranks must fit an allreduce");

_Static_assert(CONFIG_MAX_NODES >= 1 && CONFIG_MAX_NODES <= 1048576,
               "CONFIG_MAX_NODES must be 1..2^20");
_Static_assert((CONFIG_MAX_NODES % 64) == 0 || CONFIG_MAX_NODES < 64,
               "CONFIG_MAX_NODES must be a multiple of 64 (bitmap words)");
_Static_assert(CONFIG_MAX_DIMS >= 1 && CONFIG_MAX_DIMS <= 6,
               "CONFIG_MAX_DIMS must be 1..6");
_Static_assert(CONFIG_TREE_RADIX_DEFAULT >= 2 &&
                   CONFIG_TREE_RADIX_DEFAULT <= CONFIG_TREE_RADIX_MAX &&
                   (CONFIG_TREE_RADIX_DEFAULT &
                    (CONFIG_TREE_RADIX_DEFAULT - 1)) == 0,
               "CONFIG_TREE_RADIX_DEFAULT must be a power of two in 2..16");
_Static_assert(CONFIG_RING_SIZE >= 2 &&
                   (CONFIG_RING_SIZE & (CONFIG_RING_SIZE - 1)) == 0,
               "CONFIG_RING_SIZE must be a power of two >= 2");
_Static_assert(CONFIG_LINK_WINDOW >= 2 && CONFIG_LINK_WINDOW <= 128 &&
                   (CONFIG_LINK_WINDOW & (CONFIG_LINK_WINDOW - 1)) == 0,
               "CONFIG_LINK_WINDOW must be a power of two in 2..128");
_Static_assert(CONFIG_MAX_FRAME >= 128 && CONFIG_MAX_FRAME <= 1514,
               "CONFIG_MAX_FRAME must be 128..1514 (standard Ethernet)");
_Static_assert(CONFIG_STACK_SIZE >= 4096 && (CONFIG_STACK_SIZE % 8) == 0,
               "CONFIG_STACK_SIZE must be >= 4 KiB and 8-byte aligned");
_Static_assert(CONFIG_ROUTE_TABLE_ENTRIES >= 4 && CONFIG_ROUTE_TABLE_ENTRIES <= 65536 &&
                   (CONFIG_ROUTE_TABLE_ENTRIES & (CONFIG_ROUTE_TABLE_ENTRIES - 1)) == 0,
               "CONFIG_ROUTE_TABLE_ENTRIES must be a power of two in 4..65536");
_Static_assert(CONFIG_ROUTE_TABLE_LINKS >= 4 && CONFIG_ROUTE_TABLE_LINKS <= 4096,
               "CONFIG_ROUTE_TABLE_LINKS must be in 4..4096");
_Static_assert(CONFIG_MAX_TIMERS >= 4 && CONFIG_MAX_TIMERS <= 256,
               "CONFIG_MAX_TIMERS must be 4..256");
_Static_assert(CONFIG_CONSOLE_BUFFER >= 256 && CONFIG_CONSOLE_BUFFER <= 65536,
               "CONFIG_CONSOLE_BUFFER must be 256..65536 bytes");
_Static_assert(CONFIG_MAX_POLLERS >= 1 && CONFIG_MAX_POLLERS <= 32,
               "CONFIG_MAX_POLLERS must be 1..32");

_Static_assert(CONFIG_COMM_MAX_COMMS >= 1 && CONFIG_COMM_MAX_COMMS <= 255,
               "CONFIG_COMM_MAX_COMMS must be 1..255");
_Static_assert(CONFIG_COMM_MAX_PEERS >= 2 && CONFIG_COMM_MAX_PEERS <= 255,
               "CONFIG_COMM_MAX_PEERS must be 2..255 (a session id holds the slot in 8 bits)");
_Static_assert(CONFIG_COMM_WINDOW >= 2 && CONFIG_COMM_WINDOW <= 32 &&
                   (CONFIG_COMM_WINDOW & (CONFIG_COMM_WINDOW - 1)) == 0,
               "CONFIG_COMM_WINDOW must be a power of two in 2..32");
_Static_assert(CONFIG_COMM_MAX_REQUESTS >= 8 && CONFIG_COMM_MAX_REQUESTS <= 4096,
               "CONFIG_COMM_MAX_REQUESTS must be 8..4096");
_Static_assert(CONFIG_COMM_MAX_MESSAGE >= 65536 && CONFIG_COMM_MAX_MESSAGE <= (1 << 30),
               "CONFIG_COMM_MAX_MESSAGE must be 64 KiB..1 GiB");
_Static_assert(CONFIG_COMM_POOL_BLOCK >= 64 && (CONFIG_COMM_POOL_BLOCK % 8) == 0 &&
                   CONFIG_COMM_POOL_BYTES % CONFIG_COMM_POOL_BLOCK == 0 &&
                   CONFIG_COMM_POOL_BYTES / CONFIG_COMM_POOL_BLOCK >= 2 &&
                   CONFIG_COMM_POOL_BYTES / CONFIG_COMM_POOL_BLOCK <= 65535,
               "CONFIG_COMM_POOL_BYTES must be 2..65535 blocks of CONFIG_COMM_POOL_BLOCK");
_Static_assert(CONFIG_COMM_MAX_UNEXPECTED >= 2 && CONFIG_COMM_MAX_UNEXPECTED <= 4096,
               "CONFIG_COMM_MAX_UNEXPECTED must be 2..4096");
_Static_assert(CONFIG_COMM_TREE_RADIX >= 2 && CONFIG_COMM_TREE_RADIX <= CONFIG_TREE_RADIX_MAX &&
                   (CONFIG_COMM_TREE_RADIX & (CONFIG_COMM_TREE_RADIX - 1)) == 0,
               "CONFIG_COMM_TREE_RADIX must be a power of two in 2..16");
_Static_assert(CONFIG_COMM_MAX_COLLECTIVES >= 1 && CONFIG_COMM_MAX_COLLECTIVES <= 16,
               "CONFIG_COMM_MAX_COLLECTIVES must be 1..16");
_Static_assert(CONFIG_COMM_COLL_SCRATCH >= 1024 && (CONFIG_COMM_COLL_SCRATCH % 8) == 0,
               "CONFIG_COMM_COLL_SCRATCH must be >= 1 KiB and a multiple of 8");
_Static_assert(CONFIG_COMM_REDUCE_MAX >= 64 && (CONFIG_COMM_REDUCE_MAX % 8) == 0 &&
                   (CONFIG_COMM_TREE_RADIX + 1) * CONFIG_COMM_REDUCE_MAX <=
                       CONFIG_COMM_COLL_SCRATCH,
               "CONFIG_COMM_REDUCE_MAX must be a multiple of 8 and (radix + 1) of them must "
               "fit CONFIG_COMM_COLL_SCRATCH");
_Static_assert(CONFIG_COMM_MAP_ENTRIES >= 16 && CONFIG_COMM_MAP_ENTRIES <= (1 << 22),
               "CONFIG_COMM_MAP_ENTRIES must be 16..2^22");
_Static_assert(CONFIG_COMM_FT == 0 || CONFIG_COMM_FT == 1, "CONFIG_COMM_FT must be 0 or 1");
_Static_assert(CONFIG_COMM_FT_MAX_EDITS >= 1 && CONFIG_COMM_FT_MAX_EDITS <= 64,
               "CONFIG_COMM_FT_MAX_EDITS must be 1..64 (a rebuild's decision carries them)");
_Static_assert(CONFIG_COMM_HOLD_FRAMES >= 0 && CONFIG_COMM_HOLD_FRAMES <= 64,
               "CONFIG_COMM_HOLD_FRAMES must be 0..64 (each holds a whole frame)");
#ifndef CONFIG_COMM_HOLD_UNDERSIZED /* a test's own small hold, on purpose */
_Static_assert(CONFIG_COMM_HOLD_FRAMES == 0 || CONFIG_COMM_HOLD_FRAMES >= COMM_HOLD_NEEDED,
               "CONFIG_COMM_HOLD_FRAMES must be 0 or at least (CONFIG_COMM_TREE_RADIX + 1) x "
               "COMM_HOLD_ROUNDS: a frame per tree neighbour per round a view starts");
#endif
_Static_assert(CONFIG_COMM_OUTBOX_FRAMES >= 4 && CONFIG_COMM_OUTBOX_FRAMES <= 1024,
               "CONFIG_COMM_OUTBOX_FRAMES must be 4..1024");

#endif /* TORI_CONFIG_H */
