#include "node/node.h"

static struct node node;

void node_init(const struct personality *personality)
{
    node.personality = personality;
    node_network_init(&node);
    node_membership_init(&node);
    node_comm_init(&node);
    node_job_init(&node);
}
