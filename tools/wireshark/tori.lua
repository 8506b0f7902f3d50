-- tori.lua: a Wireshark/tshark dissector for tori's torus frames
-- (EtherType 0x88B5): the frame header (net/torus/frame.h), membership
-- messages (membership/codec.h) and comm frames (comm/codec.h).
--
--   tshark -X lua_script:tools/wireshark/tori.lua -r capture.pcap -V
--   wireshark -X lua_script:tools/wireshark/tori.lua capture.pcap
--
-- or copy it into Wireshark's personal plugins folder.  Every field is
-- little-endian, as on the wire; field names start with "tori." (filters:
-- tori.mship.type == 7, tori.mship.failed == 6, tori.comm.kind == 4).

local tori = Proto("tori", "tori torus frame")
local mship = Proto("tori_mship", "tori membership message")
local comm = Proto("tori_comm", "tori comm frame")

local ETHERTYPE = 0x88B5
local HEADER_SIZE = 64 -- Ethernet (14) and the tori header (50), version 2
local CHECK_OFFSET = 56 -- the 8-byte check: SipHash-2-4 tag, or CRC-32 keyless

local frame_types = {
    [0] = "link_ack", [1] = "ping", [2] = "pong", [3] = "membership",
    [4] = "control", [5] = "flood", [6] = "comm", [7] = "route",
}
local TYPE_MEMBERSHIP, TYPE_COMM = 3, 6

local mship_types = {
    [1] = "heartbeat", [2] = "how_are_you", [3] = "i_am_alive", [4] = "node_failure",
    [5] = "root_failure", [6] = "failure_det_ack", [7] = "failed_node", [8] = "root_dead",
    [9] = "root_and_node_failure", [10] = "new_node_join", [11] = "alive_node_join",
    [12] = "failure_ack", [13] = "join_ack", [14] = "new_node", [15] = "node_alive",
    [16] = "join_redirect", [17] = "join_det_ack", [18] = "view_request",
    [19] = "view_chunk", [20] = "view_notice", [21] = "partitioned",
    [22] = "join_refused", [23] = "relay", [24] = "refuted",
}

local comm_kinds = {
    [1] = "open", [2] = "accept", [3] = "busy", [4] = "data", [5] = "ack", [6] = "wait",
    [7] = "grant", [8] = "close", [9] = "closed", [10] = "close_req", [11] = "reset",
    [12] = "revoke",
}

-- A keyless frame's check is its CRC-32, the upper 4 bytes zero; a keyed
-- frame's is a SipHash-2-4 tag under the job key, which is never shown, so
-- the dissector cannot check it (a tag's upper half is zero once in 2^32).
local checksum_states = { [0] = "bad CRC-32", [1] = "good CRC-32 (keyless)",
                          [2] = "SipHash-2-4 tag (keyed; not checked: no key)" }

local f = tori.fields
f.magic = ProtoField.uint16("tori.magic", "Magic", base.HEX)
f.version = ProtoField.uint8("tori.version", "Version")
f.type = ProtoField.uint8("tori.type", "Type", base.DEC, frame_types)
f.flags = ProtoField.uint8("tori.flags", "Flags", base.HEX)
f.flag_syn = ProtoField.bool("tori.flags.syn", "SYN (link session handshake)", 8, nil, 0x01)
f.flag_nak = ProtoField.bool("tori.flags.nak", "NAK (resend from ack)", 8, nil, 0x02)
f.flag_datagram = ProtoField.bool("tori.flags.datagram",
                                  "Datagram (sent once, its own sequence: heartbeats)", 8, nil, 0x04)
f.ttl = ProtoField.uint8("tori.ttl", "TTL")
f.hops = ProtoField.uint8("tori.hops", "Hops")
f.length = ProtoField.uint16("tori.length", "Payload length")
f.src = ProtoField.uint32("tori.src", "Source rank")
f.dst = ProtoField.uint32("tori.dst", "Destination rank")
f.epoch = ProtoField.uint64("tori.epoch", "View epoch", base.HEX)
f.link_seq = ProtoField.uint32("tori.link.seq", "Link sequence")
f.link_ack = ProtoField.uint32("tori.link.ack", "Link acknowledgment (next expected)")
f.link_sender_inc = ProtoField.uint32("tori.link.sender_incarnation", "Link sender incarnation")
f.link_receiver_inc = ProtoField.uint32("tori.link.receiver_incarnation",
                                        "Link receiver incarnation")
f.checksum = ProtoField.uint64("tori.checksum", "Check (tag or CRC-32)", base.HEX)
f.checksum_status = ProtoField.uint8("tori.checksum.status", "Check status", base.DEC,
                                     checksum_states)
f.payload = ProtoField.bytes("tori.payload", "Payload")

local m = mship.fields
m.version = ProtoField.uint8("tori.mship.version", "Version")
m.type = ProtoField.uint8("tori.mship.type", "Type", base.DEC, mship_types)
m.flags = ProtoField.uint8("tori.mship.flags", "Flags (0x01: has a view)", base.HEX)
m.sender = ProtoField.uint32("tori.mship.sender", "Sender")
m.incarnation = ProtoField.uint32("tori.mship.incarnation", "Sender incarnation")
m.epoch = ProtoField.uint64("tori.mship.epoch", "Sender epoch", base.HEX)
m.epoch_counter = ProtoField.uint32("tori.mship.epoch.counter", "Sender epoch counter")
m.stable_epoch = ProtoField.uint64("tori.mship.stable_epoch", "Stable epoch", base.HEX)
-- reports (node_failure, root_failure) and their ack
m.detector = ProtoField.uint32("tori.mship.detector", "Detector")
m.sequence = ProtoField.uint32("tori.mship.sequence", "Report sequence")
m.failed_root = ProtoField.uint32("tori.mship.failed_root", "Failed root (0xffffffff: none)")
m.count = ProtoField.uint16("tori.mship.count", "Count")
m.report_flags = ProtoField.uint16("tori.mship.report_flags", "Report flags (0x01: prefix)",
                                   base.HEX)
m.suspect = ProtoField.uint32("tori.mship.suspect", "Suspect")
-- changes
m.base_epoch = ProtoField.uint64("tori.mship.base_epoch", "Base epoch", base.HEX)
m.change_flags = ProtoField.uint8("tori.mship.change_flags",
                                  "Change flags (0x01: base stable, 0x02: direct)", base.HEX)
m.failed_count = ProtoField.uint16("tori.mship.failed_count", "Failed count")
m.joined_count = ProtoField.uint16("tori.mship.joined_count", "Joined count")
m.live_after = ProtoField.uint32("tori.mship.live_after", "Live after")
m.root_after = ProtoField.uint32("tori.mship.root_after", "Root after")
m.digest_after = ProtoField.uint64("tori.mship.digest_after", "Digest after", base.HEX)
m.failed = ProtoField.uint32("tori.mship.failed", "Failed")
m.joined = ProtoField.uint32("tori.mship.joined", "Joined")
m.joined_inc = ProtoField.uint32("tori.mship.joined_incarnation", "Joined incarnation")
-- acks up the tree
m.ack_epoch = ProtoField.uint64("tori.mship.ack_epoch", "Acked epoch", base.HEX)
m.messages = ProtoField.uint32("tori.mship.messages", "Messages of the subtree")
m.reached = ProtoField.uint32("tori.mship.reached", "Members reached")
m.ack_flags = ProtoField.uint8("tori.mship.ack_flags", "Ack flags (0x01: incomplete)", base.HEX)
-- relays (membership/machine/relay.c): an envelope, and the root's refutation
m.origin = ProtoField.uint32("tori.mship.relay.origin", "Origin")
m.target = ProtoField.uint32("tori.mship.relay.target", "Target")
m.relay_flags = ProtoField.uint8("tori.mship.relay.flags",
                                 "Relay flags (0x01: forwarded by the relay)", base.HEX)
m.inner_length = ProtoField.uint16("tori.mship.relay.inner_length", "Inner message length")
m.inner_type = ProtoField.uint8("tori.mship.relay.inner_type", "Inner type", base.DEC, mship_types)
m.peer = ProtoField.uint32("tori.mship.refuted.peer", "Peer (alive)")
m.relay = ProtoField.uint32("tori.mship.refuted.relay", "Relay")
-- joins, redirects, view transfer
m.config_digest = ProtoField.uint32("tori.mship.config_digest", "Config digest", base.HEX)
m.join_flags = ProtoField.uint8("tori.mship.join_flags", "Join flags (0x01: rejoin)", base.HEX)
m.root = ProtoField.uint32("tori.mship.root", "Root")
m.joiner_inc = ProtoField.uint32("tori.mship.joiner_incarnation", "Joiner incarnation")
m.from_pos = ProtoField.uint32("tori.mship.from_pos", "From position")
m.encoding = ProtoField.uint8("tori.mship.encoding", "Encoding", base.DEC,
                              { [0] = "intervals", [1] = "bits" })
m.chunk_flags = ProtoField.uint8("tori.mship.chunk_flags", "Chunk flags (0x01: final)", base.HEX)
m.to_pos = ProtoField.uint32("tori.mship.to_pos", "To position")
m.live = ProtoField.uint32("tori.mship.live", "Live")
m.digest = ProtoField.uint64("tori.mship.digest", "Digest", base.HEX)
m.ref_count = ProtoField.uint32("tori.mship.ref_count", "Reference view live count")
m.ref_removed = ProtoField.uint32("tori.mship.ref_removed", "Removed since the reference")
m.ref_root = ProtoField.uint32("tori.mship.ref_root", "Reference root position")
m.interval_start = ProtoField.uint32("tori.mship.interval_start", "Interval start")
m.interval_length = ProtoField.uint32("tori.mship.interval_length", "Interval length")
m.bitmap = ProtoField.bytes("tori.mship.bitmap", "Live bitmap")

local c = comm.fields
c.version = ProtoField.uint8("tori.comm.version", "Version")
c.kind = ProtoField.uint8("tori.comm.kind", "Kind", base.DEC, comm_kinds)
c.flags = ProtoField.uint8("tori.comm.flags", "Flags", base.HEX)
c.sender_inc = ProtoField.uint32("tori.comm.sender_incarnation", "Sender incarnation")
c.receiver_inc = ProtoField.uint32("tori.comm.receiver_incarnation", "Receiver incarnation")
c.sid = ProtoField.uint32("tori.comm.sid", "Session id", base.HEX)
c.token = ProtoField.uint32("tori.comm.token", "Token", base.HEX)
c.seq = ProtoField.uint32("tori.comm.seq", "Sequence")
c.cum = ProtoField.uint32("tori.comm.cum", "Cumulative ack")
c.mask = ProtoField.uint32("tori.comm.mask", "Ack mask", base.HEX)
c.deferred = ProtoField.uint32("tori.comm.deferred", "Deferred mask", base.HEX)
c.final = ProtoField.uint32("tori.comm.final", "Final sequence")
c.offset = ProtoField.uint32("tori.comm.offset", "Offset")
c.total = ProtoField.uint32("tori.comm.total", "Message length")
c.context = ProtoField.uint16("tori.comm.context", "Context", base.HEX)
c.context_gen = ProtoField.uint16("tori.comm.context_gen", "Context generation")
c.source_rank = ProtoField.uint32("tori.comm.source_rank", "Source rank")
c.tag = ProtoField.uint32("tori.comm.tag", "Tag")
c.resend_of = ProtoField.uint32("tori.comm.resend_of", "Resend of")
c.ack_sid = ProtoField.uint32("tori.comm.ack_sid", "Piggybacked ack: session", base.HEX)
c.ack_cum = ProtoField.uint32("tori.comm.ack_cum", "Piggybacked ack: cumulative")
c.ack_mask = ProtoField.uint32("tori.comm.ack_mask", "Piggybacked ack: mask", base.HEX)
c.ack_deferred = ProtoField.uint32("tori.comm.ack_deferred", "Piggybacked ack: deferred",
                                   base.HEX)
c.revoker_node = ProtoField.uint32("tori.comm.revoker_node", "Revoker node")
c.revoker_rank = ProtoField.uint32("tori.comm.revoker_rank", "Revoker rank")
c.data = ProtoField.bytes("tori.comm.data", "Data")

local bad_checksum = ProtoExpert.new("tori.checksum.bad", "Bad CRC-32", expert.group.CHECKSUM,
                                     expert.severity.ERROR)
tori.experts = { bad_checksum }

-- CRC-32 (IEEE 802.3, reflected) as lib/crc32.c, table-driven.
local crc_table = {}
for i = 0, 255 do
    local value = i
    for _ = 1, 8 do
        if bit32.band(value, 1) ~= 0 then
            value = bit32.bxor(bit32.rshift(value, 1), 0xEDB88320)
        else
            value = bit32.rshift(value, 1)
        end
    end
    crc_table[i] = value
end

local eth_dst_field = Field.new("eth.dst")
local eth_src_field = Field.new("eth.src")

-- A whole frame's CRC-32 with its check field (offset 56..63) taken as 0.
local function frame_crc(bytes)
    local crc = 0xFFFFFFFF
    for i = 0, bytes:len() - 1 do
        local byte = (i >= CHECK_OFFSET and i < CHECK_OFFSET + 8) and 0 or bytes:get_index(i)
        crc = bit32.bxor(crc_table[bit32.band(bit32.bxor(crc, byte), 0xFF)], bit32.rshift(crc, 8))
    end
    return bit32.bxor(crc, 0xFFFFFFFF)
end

local function add_u32_list(tree, field, tvb, offset, count)
    for i = 0, count - 1 do
        if offset + 4 * i + 4 > tvb:len() then return end
        tree:add_le(field, tvb(offset + 4 * i, 4))
    end
end

-- Membership bodies, by type (b: the body's offset in tvb).
local function dissect_membership_body(tvb, tree, kind, b)
    local body = tvb:len() - b
    if kind == 4 or kind == 5 then -- node_failure, root_failure
        if body < 16 then return "" end
        tree:add_le(m.detector, tvb(b, 4))
        tree:add_le(m.sequence, tvb(b + 4, 4))
        tree:add_le(m.failed_root, tvb(b + 8, 4))
        tree:add_le(m.count, tvb(b + 12, 2))
        tree:add_le(m.report_flags, tvb(b + 14, 2))
        local count = tvb(b + 12, 2):le_uint()
        add_u32_list(tree, m.suspect, tvb, b + 16, count)
        return string.format(" suspects=%d", count)
    elseif kind == 6 or kind == 16 or kind == 17 or kind == 18 then
        if body < 4 then return "" end
        local field = ({ [6] = m.sequence, [16] = m.root, [17] = m.joiner_inc,
                         [18] = m.from_pos })[kind]
        tree:add_le(field, tvb(b, 4))
        return ""
    elseif (kind >= 7 and kind <= 11) or kind == 21 then -- changes
        if body < 32 then return "" end
        tree:add_le(m.base_epoch, tvb(b, 8))
        tree:add_le(m.change_flags, tvb(b + 8, 1))
        tree:add_le(m.failed_count, tvb(b + 10, 2))
        tree:add_le(m.joined_count, tvb(b + 12, 2))
        tree:add_le(m.live_after, tvb(b + 16, 4))
        tree:add_le(m.root_after, tvb(b + 20, 4))
        tree:add_le(m.digest_after, tvb(b + 24, 8))
        local failed = tvb(b + 10, 2):le_uint()
        local joined = tvb(b + 12, 2):le_uint()
        local ids = {}
        for i = 0, failed - 1 do
            local at = b + 32 + 4 * i
            if at + 4 > tvb:len() then break end
            tree:add_le(m.failed, tvb(at, 4))
            ids[#ids + 1] = tostring(tvb(at, 4):le_uint())
        end
        for i = 0, joined - 1 do
            local at = b + 32 + 4 * failed + 8 * i
            if at + 8 > tvb:len() then break end
            tree:add_le(m.joined, tvb(at, 4))
            tree:add_le(m.joined_inc, tvb(at + 4, 4))
        end
        return string.format(" failed=[%s] joined=%d", table.concat(ids, ","), joined)
    elseif kind == 12 or kind == 13 then -- failure_ack, join_ack
        if body < 20 then return "" end
        tree:add_le(m.ack_epoch, tvb(b, 8))
        tree:add_le(m.messages, tvb(b + 8, 4))
        tree:add_le(m.reached, tvb(b + 12, 4))
        tree:add_le(m.ack_flags, tvb(b + 16, 1))
        return string.format(" reached=%d", tvb(b + 12, 4):le_uint())
    elseif kind == 14 or kind == 15 then -- new_node, node_alive
        if body < 8 then return "" end
        tree:add_le(m.config_digest, tvb(b, 4))
        tree:add_le(m.join_flags, tvb(b + 4, 1))
        return ""
    elseif kind == 19 then -- view_chunk
        if body < 40 then return "" end
        tree:add_le(m.config_digest, tvb(b, 4))
        tree:add_le(m.encoding, tvb(b + 4, 1))
        tree:add_le(m.chunk_flags, tvb(b + 5, 1))
        tree:add_le(m.count, tvb(b + 6, 2))
        tree:add_le(m.from_pos, tvb(b + 8, 4))
        tree:add_le(m.to_pos, tvb(b + 12, 4))
        tree:add_le(m.live, tvb(b + 16, 4))
        tree:add_le(m.digest, tvb(b + 20, 8))
        tree:add_le(m.ref_count, tvb(b + 28, 4))
        tree:add_le(m.ref_removed, tvb(b + 32, 4))
        tree:add_le(m.ref_root, tvb(b + 36, 4))
        local count = tvb(b + 6, 2):le_uint()
        if tvb(b + 4, 1):uint() == 1 then
            if body > 40 then tree:add(m.bitmap, tvb(b + 40)) end
        else
            for i = 0, count - 1 do
                local at = b + 40 + 8 * i
                if at + 8 > tvb:len() then break end
                tree:add_le(m.interval_start, tvb(at, 4))
                tree:add_le(m.interval_length, tvb(at + 4, 4))
            end
        end
        return string.format(" live=%d", tvb(b + 16, 4):le_uint())
    elseif kind == 23 then -- relay: the inner message follows, a whole one
        if body < 12 + 28 then return "" end
        tree:add_le(m.origin, tvb(b, 4))
        tree:add_le(m.target, tvb(b + 4, 4))
        tree:add_le(m.relay_flags, tvb(b + 8, 1))
        tree:add_le(m.inner_length, tvb(b + 10, 2))
        tree:add_le(m.inner_type, tvb(b + 13, 1))
        local inner = mship_types[tvb(b + 13, 1):uint()] or "?"
        return string.format(" %d->%d %s", tvb(b, 4):le_uint(), tvb(b + 4, 4):le_uint(), inner)
    elseif kind == 24 then -- refuted
        if body < 8 then return "" end
        tree:add_le(m.peer, tvb(b, 4))
        tree:add_le(m.relay, tvb(b + 4, 4))
        return string.format(" peer=%d relay=%d", tvb(b, 4):le_uint(), tvb(b + 4, 4):le_uint())
    end
    return ""
end

function mship.dissector(tvb, pinfo, tree)
    if tvb:len() < 28 then return 0 end
    local subtree = tree:add(mship, tvb())
    local kind = tvb(1, 1):uint()
    subtree:add_le(m.version, tvb(0, 1))
    subtree:add_le(m.type, tvb(1, 1))
    subtree:add_le(m.flags, tvb(2, 1))
    subtree:add_le(m.sender, tvb(4, 4))
    subtree:add_le(m.incarnation, tvb(8, 4))
    subtree:add_le(m.epoch, tvb(12, 8))
    -- the counter: the top 28 bits of the epoch (membership/codec.h)
    subtree:add(m.epoch_counter, tvb(16, 4), bit32.rshift(tvb(16, 4):le_uint(), 4))
    subtree:add_le(m.stable_epoch, tvb(20, 8))
    local detail = dissect_membership_body(tvb, subtree, kind, 28)
    local name = mship_types[kind] or string.format("type %d", kind)
    subtree:append_text(": " .. name)
    pinfo.cols.info:append(string.format(" %s%s", name, detail))
    return tvb:len()
end

function comm.dissector(tvb, pinfo, tree)
    if tvb:len() < 12 then return 0 end
    local subtree = tree:add(comm, tvb())
    local kind = tvb(1, 1):uint()
    subtree:add_le(c.version, tvb(0, 1))
    subtree:add_le(c.kind, tvb(1, 1))
    subtree:add_le(c.flags, tvb(2, 1))
    subtree:add_le(c.sender_inc, tvb(4, 4))
    subtree:add_le(c.receiver_inc, tvb(8, 4))
    local b, body = 12, tvb:len() - 12
    local detail = ""
    if kind == 4 and body >= 48 then -- data: the fragment and the envelope
        subtree:add_le(c.token, tvb(b, 4))
        subtree:add_le(c.seq, tvb(b + 4, 4))
        subtree:add_le(c.offset, tvb(b + 8, 4))
        subtree:add_le(c.total, tvb(b + 12, 4))
        subtree:add_le(c.context, tvb(b + 16, 2))
        subtree:add_le(c.context_gen, tvb(b + 18, 2))
        subtree:add_le(c.source_rank, tvb(b + 20, 4))
        subtree:add_le(c.tag, tvb(b + 24, 4))
        subtree:add_le(c.resend_of, tvb(b + 28, 4))
        subtree:add_le(c.ack_sid, tvb(b + 32, 4))
        subtree:add_le(c.ack_cum, tvb(b + 36, 4))
        subtree:add_le(c.ack_mask, tvb(b + 40, 4))
        subtree:add_le(c.ack_deferred, tvb(b + 44, 4))
        if body > 48 then subtree:add(c.data, tvb(b + 48)) end
        detail = string.format(" seq=%d tag=%d", tvb(b + 4, 4):le_uint(), tvb(b + 24, 4):le_uint())
    elseif kind == 12 and body >= 12 then -- revoke
        subtree:add_le(c.context, tvb(b, 2))
        subtree:add_le(c.context_gen, tvb(b + 2, 2))
        subtree:add_le(c.revoker_node, tvb(b + 4, 4))
        subtree:add_le(c.revoker_rank, tvb(b + 8, 4))
    elseif kind == 11 and body >= 4 then -- reset
        subtree:add_le(c.token, tvb(b, 4))
    elseif body >= 4 then -- every other kind starts with the sid
        subtree:add_le(c.sid, tvb(b, 4))
        if kind == 2 and body >= 8 then
            subtree:add_le(c.token, tvb(b + 4, 4))
        elseif kind == 5 and body >= 16 then
            subtree:add_le(c.cum, tvb(b + 4, 4))
            subtree:add_le(c.mask, tvb(b + 8, 4))
            subtree:add_le(c.deferred, tvb(b + 12, 4))
            detail = string.format(" cum=%d", tvb(b + 4, 4):le_uint())
        elseif (kind == 6 or kind == 7) and body >= 8 then
            subtree:add_le(c.seq, tvb(b + 4, 4))
        elseif kind == 8 and body >= 8 then
            subtree:add_le(c.final, tvb(b + 4, 4))
        end
    end
    local name = comm_kinds[kind] or string.format("kind %d", kind)
    subtree:append_text(": " .. name)
    pinfo.cols.info:append(string.format(" %s%s", name, detail))
    return tvb:len()
end

function tori.dissector(tvb, pinfo, tree)
    -- tvb starts after the Ethernet header: the tori header is 50 bytes.
    if tvb:len() < HEADER_SIZE - 14 then return 0 end
    pinfo.cols.protocol = "tori"
    local subtree = tree:add(tori, tvb(0, HEADER_SIZE - 14))
    local kind = tvb(3, 1):uint()
    subtree:add_le(f.magic, tvb(0, 2))
    subtree:add_le(f.version, tvb(2, 1))
    subtree:add_le(f.type, tvb(3, 1))
    local flags = subtree:add_le(f.flags, tvb(4, 1))
    flags:add(f.flag_syn, tvb(4, 1))
    flags:add(f.flag_nak, tvb(4, 1))
    flags:add(f.flag_datagram, tvb(4, 1))
    subtree:add_le(f.ttl, tvb(5, 1))
    subtree:add_le(f.hops, tvb(6, 1))
    subtree:add_le(f.length, tvb(8, 2))
    subtree:add_le(f.src, tvb(10, 4))
    subtree:add_le(f.dst, tvb(14, 4))
    subtree:add_le(f.epoch, tvb(18, 8))
    subtree:add_le(f.link_seq, tvb(26, 4))
    subtree:add_le(f.link_ack, tvb(30, 4))
    subtree:add_le(f.link_sender_inc, tvb(34, 4))
    subtree:add_le(f.link_receiver_inc, tvb(38, 4))
    subtree:add_le(f.checksum, tvb(42, 8))
    -- The check covers the whole frame, the Ethernet header included: put
    -- the addresses Wireshark's Ethernet dissector read back in front.
    local state = nil
    local eth_dst, eth_src = eth_dst_field(), eth_src_field()
    if eth_dst ~= nil and eth_src ~= nil then
        local whole = ByteArray.new()
        whole:append(eth_dst.range:bytes())
        whole:append(eth_src.range:bytes())
        whole:append(ByteArray.new("88b5"))
        whole:append(tvb:range(0):bytes())
        if frame_crc(whole) == tvb(42, 4):le_uint() and tvb(46, 4):le_uint() == 0 then
            state = 1
        elseif tvb(46, 4):le_uint() ~= 0 then
            state = 2
        else
            state = 0
        end
    end
    if state ~= nil then
        local status = subtree:add(f.checksum_status, tvb(42, 8), state)
        status:set_generated()
        if state == 0 then status:add_proto_expert_info(bad_checksum) end
    end
    local type_name = frame_types[kind] or string.format("type %d", kind)
    pinfo.cols.info = string.format("%s %d -> %d", type_name, tvb(10, 4):le_uint(),
                                    tvb(14, 4):le_uint())
    local length = tvb(8, 2):le_uint()
    if tvb:len() > HEADER_SIZE - 14 then
        local payload = tvb(HEADER_SIZE - 14)
        if kind == TYPE_MEMBERSHIP then
            mship.dissector(payload:tvb(), pinfo, tree)
        elseif kind == TYPE_COMM then
            comm.dissector(payload:tvb(), pinfo, tree)
        else
            subtree:add(f.payload, payload)
        end
    end
    subtree:append_text(string.format(", %s, %d -> %d, payload %d bytes", type_name,
                                      tvb(10, 4):le_uint(), tvb(14, 4):le_uint(), length))
    return tvb:len()
end

DissectorTable.get("ethertype"):add(ETHERTYPE, tori)
