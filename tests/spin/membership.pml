/*
 * The radix-tree membership protocol, abstracted for SPIN: a second proof,
 * beside the exhaustive explorer over the C code (tests/explore).
 *
 * Four nodes: 0..2 start as members, 3 is a spare that may boot and join
 * once; at most MAX_CRASHES crash, at any point (the root included, in the
 * middle of sending a change).  The root of a view is its lowest member
 * that the node does not know to be dead.  It queues the failures it is
 * told of (and finds) and the joins it is asked for, then mints the next
 * view: epoch = counter * 4 + minter (an epoch names who minted it), and
 * installs it.  The change goes down the tree of the new view (radix 2 by
 * rank: the children of rank r are ranks 2r+1 and 2r+2); each node
 * installs a change newer than its epoch (a node that missed one takes
 * the whole view, as the C code fetches it) and forwards it, then acks up
 * once its children acked; a child that crashed is reported instead.  The
 * root's round ends on the last ack (the view is stable).  Detectors are
 * accurate (only a crashed node is suspected), at any time after the crash;
 * messages to a crashed node are lost; channels are FIFO.
 *
 * Checked: self inclusion and epochs only growing at every installation;
 * one membership per epoch (a registry of the first installation of each);
 * and when nothing can move any more (SPIN's timeout), agreement: every
 * running node holds the same view, which is exactly the running nodes.
 *
 * PLANTED: the minted epoch forgets its minter (counter * 4): SPIN must
 * find two memberships under one epoch (tests/spin/CMakeLists.txt).
 */

#define N 4
#define SPARE 3
#define INITIAL 7 /* members 0, 1, 2 */
#ifndef MAX_CRASHES
#define MAX_CRASHES 2
#endif
#define EPOCHS 32

#define bit(i) (1 << (i))
#define has(set, i) (((set) >> (i)) & 1)
#define counter(e) ((e) / 4)

mtype = { CHANGE, ACK, REPORT, JOIN };

/* Guards must be exact (an always-enabled option would hide quiescence). */
#define unreported(me, c) (has(view[me], c) && !alive[c] && !has(reported[me], c))
#define any_unreported(me) (unreported(me, 0) || unreported(me, 1) || unreported(me, 2) || \
                            unreported(me, 3))
#define lost_child(me, c) (has(pending[me], c) && !alive[c])
#define any_lost_child(me) (lost_child(me, 0) || lost_child(me, 1) || lost_child(me, 2) || \
                            lost_child(me, 3))
#define usable(me, i) (has(view[me], i) && !has(known_dead[me], i))
#define is_root(me) (usable(me, me) && (me == 0 || !usable(me, 0)) && \
                     (me <= 1 || !usable(me, 1)) && (me <= 2 || !usable(me, 2)))

/* type, sender, epoch, members (CHANGE) or the node reported or joining */
chan inbox[N] = [4] of { mtype, byte, byte, byte };

bool alive[N];
bool started[N];   /* the spare booted */
bool hasview[N];
byte view[N];      /* bit per member */
byte epoch[N];
byte known_dead[N]; /* members this node detected as crashed */
byte failed[N];    /* root: failures queued */
byte joins[N];     /* root: joins queued */
byte reported[N];  /* crashed members already reported in this view */
bool inround[N];   /* forwarding (or, at the root, minting) a change */
byte round_epoch[N];
byte parent[N];    /* who to ack, N: none (the root) */
byte pending[N];   /* children still to ack */
byte crashes;
byte registry[EPOCHS]; /* members + 1 of the first view installed per epoch, 0: none */

/* The member of rank k in set v (N when none). */
inline nth(v, k, out) {
    out = 0; tmp = 0;
    do
    :: out < N && has(v, out) && tmp == k -> break
    :: out < N && has(v, out) && tmp != k -> tmp++; out++
    :: out < N && !has(v, out) -> out++
    :: out == N -> break
    od
}

inline rank_of(v, id, out) {
    out = 0; tmp = 0;
    do
    :: tmp < id -> if :: has(v, tmp) -> out++ :: else fi; tmp++
    :: tmp >= id -> break
    od
}

/* Our root: the lowest member of our view we do not know to be dead. */
inline root_of(me, out) {
    out = 0;
    do
    :: out < N && has(view[me], out) && !has(known_dead[me], out) -> break
    :: out < N && !(has(view[me], out) && !has(known_dead[me], out)) -> out++
    :: out == N -> break
    od
}

/* Sends to a running node; a crashed one's channel loses it. */
inline send(to, t, a, b) {
    if
    :: alive[to] -> inbox[to]!t, me, a, b
    :: else
    fi
}

inline install(me, e, v) {
    assert(has(v, me));            /* self inclusion */
    assert(!hasview[me] || counter(e) > counter(epoch[me])); /* epochs only grow */
    if
    :: registry[e] == 0 -> registry[e] = v + 1
    :: else -> assert(registry[e] == v + 1) /* one membership per epoch */
    fi;
    hasview[me] = true; view[me] = v; epoch[me] = e;
    known_dead[me] = known_dead[me] & v;
    reported[me] = 0
}

/* Sends the change of our view to our children in its tree, waits for their acks. */
inline forward(me) {
    rank_of(view[me], me, r);
    pending[me] = 0;
    inround[me] = true;
    round_epoch[me] = epoch[me];
    nth(view[me], 2 * r + 1, c);
    if :: c < N -> pending[me] = pending[me] | bit(c) :: else fi;
    nth(view[me], 2 * r + 2, c);
    if :: c < N -> pending[me] = pending[me] | bit(c) :: else fi;
    /* one send a step: a crash may come between them */
    c = 0;
    do
    :: c < N && has(pending[me], c) && alive[me] -> send(c, CHANGE, epoch[me], view[me]); c++
    :: c < N && !has(pending[me], c) -> c++
    :: c == N || !alive[me] -> break
    od
}

inline tell_root(me, t, x) {
    root_of(me, rt);
    if
    :: rt == me && t == REPORT -> failed[me] = failed[me] | bit(x)
    :: rt == me && t == JOIN -> joins[me] = joins[me] | bit(x)
    :: rt != me && rt < N -> send(rt, t, epoch[me], x)
    :: else
    fi
}

proctype Node(byte me)
{
    mtype t; byte from, e, v;
    byte r, c, rt, tmp;
end:
    do
    /* Detector: a crashed member of our view, reported once per view. */
    :: alive[me] && hasview[me] && any_unreported(me) ->
       if
       :: unreported(me, 0) -> c = 0
       :: unreported(me, 1) -> c = 1
       :: unreported(me, 2) -> c = 2
       :: unreported(me, 3) -> c = 3
       fi;
       reported[me] = reported[me] | bit(c);
       known_dead[me] = known_dead[me] | bit(c);
       tell_root(me, REPORT, c)

    /* A child that crashed before acking: no longer waited for (the detector reports it). */
    :: alive[me] && inround[me] && any_lost_child(me) ->
       if
       :: lost_child(me, 0) -> c = 0
       :: lost_child(me, 1) -> c = 1
       :: lost_child(me, 2) -> c = 2
       :: lost_child(me, 3) -> c = 3
       fi;
       pending[me] = pending[me] & ~bit(c)

    /* The round's last ack: up to the parent, or, at the root, stable. */
    :: alive[me] && inround[me] && pending[me] == 0 && round_epoch[me] == epoch[me] ->
       inround[me] = false;
       if
       :: parent[me] < N -> send(parent[me], ACK, epoch[me], 0)
       :: else
       fi

    /* The root mints the next view from what it queued. */
    :: alive[me] && hasview[me] && !inround[me] && is_root(me) &&
       ((view[me] & ~failed[me]) | joins[me]) != view[me] ->
       v = (view[me] & ~failed[me]) | joins[me];
       failed[me] = 0; joins[me] = 0;
#ifdef PLANTED
       e = (counter(epoch[me]) + 1) * 4;
#else
       e = (counter(epoch[me]) + 1) * 4 + me;
#endif
       assert(e < EPOCHS);
       install(me, e, v);
       parent[me] = N;
       forward(me)

    /* The spare, once booted and without a view: asks a node it knows to let it in. */
    :: alive[me] && me == SPARE && !hasview[me] && timeout ->
       if
       :: c = 0
       :: c = 1
       :: c = 2
       fi;
       send(c, JOIN, 0, me)

    /* Receiving is the guard itself: a crashed node's messages are lost. */
    :: inbox[me]?t, from, e, v ->
       if
       :: !alive[me] -> skip
       :: t == CHANGE && (!hasview[me] || counter(e) > counter(epoch[me])) ->
          install(me, e, v);
          parent[me] = from;
          forward(me)
       :: t == CHANGE && hasview[me] && counter(e) <= counter(epoch[me]) ->
          skip /* stale: answered in the C code, changes nothing */
       :: t == ACK && inround[me] && e == epoch[me] -> pending[me] = pending[me] & ~bit(from)
       :: t == ACK && !(inround[me] && e == epoch[me]) -> skip
       :: (t == REPORT || t == JOIN) && hasview[me] -> tell_root(me, t, v)
       :: (t == REPORT || t == JOIN) && !hasview[me] -> skip
       fi
    od
}

/* Crashes (any running node, the root included) and the spare's boot, at any time. */
active proctype Environment()
{
    byte i;
end:
    do
    :: crashes < MAX_CRASHES ->
       if
       :: i = 0 :: i = 1 :: i = 2 :: i = 3
       fi;
       if
       :: alive[i] -> alive[i] = false; crashes++
       :: else
       fi
    :: !started[SPARE] -> started[SPARE] = true; alive[SPARE] = true
    :: break /* no more faults */
    od
}

/* When nothing can move any more (a booted spare still out would ask again):
 * every running node holds the one view of the running nodes. */
active proctype Quiescence()
{
    byte i, running, first;
    timeout && !(alive[SPARE] && !hasview[SPARE]);
    atomic {
        running = 0;
        first = N;
        i = 0;
        do
        :: i < N && alive[i] -> running = running | bit(i);
           if :: first == N -> first = i :: else fi;
           i++
        :: i < N && !alive[i] -> i++
        :: i == N -> break
        od;
        i = 0;
        do
        :: i < N && alive[i] ->
           assert(hasview[i] && view[i] == running && epoch[i] == epoch[first]);
           i++
        :: i < N && !alive[i] -> i++
        :: i == N -> break
        od
    }
}

init {
    atomic {
        alive[0] = true; alive[1] = true; alive[2] = true;
        hasview[0] = true; hasview[1] = true; hasview[2] = true;
        view[0] = INITIAL; view[1] = INITIAL; view[2] = INITIAL;
        parent[0] = N; parent[1] = N; parent[2] = N; parent[3] = N;
        registry[0] = INITIAL + 1;
        run Node(0); run Node(1); run Node(2); run Node(3)
    }
}
