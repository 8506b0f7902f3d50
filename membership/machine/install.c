/*
 * Installing a view (see machine.h): the common tail every installation
 * runs, whoever installs (the minting root, a member applying a change, a
 * transfer).  It sits above the helpers and the detector, so the helper
 * layer (machine.c) never calls up into a module.
 */
#include "membership/machine/machine.h"

static void emit_view(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    struct membership_event *e = membership_outbox_event(out, MEMBERSHIP_EVENT_VIEW, now);
    if (e != NULL) {
        e->u.view.epoch = ctx->epoch;
        e->u.view.root = machine_root_id(ctx);
        e->u.view.live = ctx->view.live;
        e->u.view.digest = ctx->digest;
    }
}

void install_refresh_tree(struct membership *ctx, uint64_t now)
{
    machine_locate_tree(ctx);
    detector_rebuild_watch(ctx, now);
}

/* The view is known to contain this node. */
void install_view(struct membership *ctx, uint64_t now, struct membership_outbox *out)
{
    ctx->counters.views_installed++;
    machine_history_add(ctx, ctx->epoch);
    ctx->coord.acting = false;
    ctx->search.active = false;
    if (ctx->round.active && ctx->round.epoch < ctx->epoch) {
        ctx->round.active = false; /* superseded: its acks will not come */
    }
    install_refresh_tree(ctx, now);
    detector_view_changed(ctx);
    emit_view(ctx, now, out);
    machine_request_work(ctx, MACHINE_WORK_REPORT);
}
