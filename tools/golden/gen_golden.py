#!/usr/bin/env python3
"""Golden fixture generator for the Felix durable segment format (v4 spec).

This is a deliberately separate, from-the-spec implementation of the segment
and index byte layouts, written in plain Python with only the standard
library. The Java reader/fsck in local-log is tested against the files this
script writes, so nothing here is (or may be) derived from the Java sources.

Run from anywhere:

    python3 tools/golden/gen_golden.py

It wipes and recreates local-log/src/test/resources/golden/ and writes:

  segments/<name>.log + <name>.expected-dump.jsonl   single segment files
  indexes/<name>.index + <name>.expected.json         single index files
  roots/<name>/ + <name>.expected-fsck.json           whole data roots for fsck
  (+ <name>.expected-fsck-repair.json for --repair-checksum-tail)

Everything is deterministic: fixed timestamps, fixed payloads, sorted
directory walks. Running it twice yields byte-identical trees.

Two halves live here and check each other:
  * a writer (build bytes on purpose, including deliberately damaged ones),
    which also knows what each fixture is meant to contain;
  * a reader (decode bytes exactly as the spec's corruption rules say),
    which is run over every file actually written; its answer must equal
    what the writer intended, or the script aborts.
"""

import base64
import json
import os
import shutil
import struct
import sys
import zlib

# --------------------------------------------------------------------------
# Constants straight from the spec
# --------------------------------------------------------------------------

SEG_MAGIC = b"FLSG"
IDX_MAGIC = b"FLSI"
SEG_HEADER_LEN = 32
IDX_HEADER_LEN = 24
IDX_ENTRY_LEN = 16
REC_HEADER_LEN = 28
TAG_LEN = 20
MAX_PAYLOAD = 64 * 1024 * 1024  # 67108864

BIT_OPEN = 1 << 31    # record opens a producer batch, carries a tag
BIT_CONT = 1 << 30    # record continues the previous record's batch
BIT_GEN = 1 << 29     # generation-start record
KIND_MASK = BIT_OPEN | BIT_CONT | BIT_GEN
LEN_MASK = (1 << 29) - 1

READABLE_SEGMENT_VERSIONS = (2, 3, 4)
READABLE_INDEX_VERSIONS = (2, 3, 4)

# Index entries: the first record, then another whenever at least this many
# bytes of segment data lie between the last indexed record and this one.
INDEX_SPACING = 4096

# Fixed clock so output never depends on when the script runs.
CREATED_AT = 1_700_000_000_000_000
TS_BASE = 1_700_000_000_500_000


def crc(data):
    return zlib.crc32(bytes(data)) & 0xFFFFFFFF


def be16(v):
    return struct.pack(">H", v)


def be32(v):
    return struct.pack(">I", v)


def be64(v):
    return struct.pack(">Q", v)


def rd16(b, at):
    return struct.unpack_from(">H", b, at)[0]


def rd32(b, at):
    return struct.unpack_from(">I", b, at)[0]


def rd64(b, at):
    return struct.unpack_from(">Q", b, at)[0]


# --------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------

def segment_header(base_offset, created_at, version=3, flags=0, magic=SEG_MAGIC,
                   bad_crc=False):
    """32-byte segment header. The CRC covers the first 24 bytes."""
    head = magic + be16(version) + be16(flags) + be64(base_offset) + be64(created_at)
    assert len(head) == 24
    c = crc(head)
    if bad_crc:
        c ^= 0x00000100
    return head + be32(c) + be32(0)


def encode_record(offset, timestamp, payload, kind_bits=0, tag=None,
                  length_field=None):
    """One record. `tag` is (producer_id, sequence, count) and is written iff
    bit 31 is among kind_bits. `length_field` overrides the low 29 bits
    (used to forge an oversized length while keeping CRCs consistent)."""
    payload = bytes(payload)
    n = len(payload) if length_field is None else length_field
    first_word = (n & LEN_MASK) | kind_bits
    prefix = be32(first_word) + be64(offset) + be64(timestamp)
    hcrc = crc(prefix)
    tag_bytes = b""
    if kind_bits & BIT_OPEN:
        producer, seq, count = tag
        tag_bytes = be64(producer) + be64(seq) + be32(count)
    else:
        assert tag is None
    first24 = prefix + be32(hcrc)
    body_crc = crc(first24 + tag_bytes + payload)
    return first24 + be32(body_crc) + tag_bytes + payload


def index_header(base_offset, version=3, flags=0, magic=IDX_MAGIC):
    return magic + be16(version) + be16(flags) + be64(base_offset) + be64(0)


def index_bytes(base_offset, entries, version=3, flags=0, magic=IDX_MAGIC):
    out = bytearray(index_header(base_offset, version, flags, magic))
    for off, pos in entries:
        out += be64(off) + be64(pos)
    return bytes(out)


class Segment:
    """Builds a segment in memory and remembers the dump line for each
    record it appends (the writer's own statement of intent)."""

    def __init__(self, base_offset, version=3, created_at=CREATED_AT):
        self.base_offset = base_offset
        self.version = version
        self.data = bytearray(segment_header(base_offset, created_at, version))
        self.next_offset = base_offset
        self.lines = []          # expected dump lines, one per record
        self.positions = []      # byte position of each record

    def _push(self, rec_bytes, line):
        self.positions.append(len(self.data))
        line["position"] = len(self.data)
        self.data += rec_bytes
        self.lines.append(line)

    def _line(self, offset, ts, kind, payload):
        return {
            "offset": offset,
            "timestamp_micros": ts,
            "kind": kind,
            "position": None,
            "payload_base64": base64.b64encode(bytes(payload)).decode("ascii"),
        }

    def _take_offset(self, offset):
        if offset is None:
            offset = self.next_offset
        self.next_offset = offset + 1
        return offset

    def plain(self, payload, offset=None, ts=None):
        offset = self._take_offset(offset)
        ts = default_ts(offset) if ts is None else ts
        self._push(encode_record(offset, ts, payload),
                   self._line(offset, ts, "plain", payload))
        return self

    def batch(self, producer, sequence, payloads, offset=None):
        """A producer batch: the first record opens it (tag with the batch's
        record count), the rest continue it."""
        for i, p in enumerate(payloads):
            off = self._take_offset(offset if i == 0 else None)
            ts = default_ts(off)
            if i == 0:
                rec = encode_record(off, ts, p, BIT_OPEN, (producer, sequence, len(payloads)))
                line = self._line(off, ts, "batch-open", p)
                line["producer_id"] = producer
                line["sequence"] = sequence
                line["batch_len"] = len(payloads)
            else:
                rec = encode_record(off, ts, p, BIT_CONT)
                line = self._line(off, ts, "batch-continue", p)
            self._push(rec, line)
        return self

    def generation_start(self, generation, offset=None):
        offset = self._take_offset(offset)
        ts = default_ts(offset)
        payload = be64(generation)
        line = self._line(offset, ts, "generation-start", payload)
        line["generation"] = generation
        self._push(encode_record(offset, ts, payload, BIT_GEN), line)
        return self

    def raw(self, rec_bytes, next_offset=None):
        """Append arbitrary record bytes (for forged records). Not added to
        the expected lines: callers use it only for the damaged record."""
        self.positions.append(len(self.data))
        self.data += rec_bytes
        if next_offset is not None:
            self.next_offset = next_offset
        return self

    def index_entries(self, upto=None):
        entries = []
        last = None
        for line in self.lines[:upto]:
            pos = line["position"]
            if last is None or pos - last >= INDEX_SPACING:
                entries.append((line["offset"], pos))
                last = pos
        return entries

    def index(self, version=3):
        return index_bytes(self.base_offset, self.index_entries(), version)


def default_ts(offset):
    return TS_BASE + offset * 1000


def order_payload(offset):
    return ("order-%d:{\"sku\":\"A-%03d\",\"qty\":%d}" % (offset, offset % 1000, offset % 7 + 1)).encode()


def pattern_payload(n, seed):
    """n bytes of a fixed byte pattern (a small LCG; no randomness)."""
    out = bytearray(n)
    x = seed & 0xFFFFFFFF
    for i in range(n):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = (x >> 16) & 0xFF
    return bytes(out)


def flip_bit(data, byte_pos, mask=0x01):
    data = bytearray(data)
    data[byte_pos] ^= mask
    return data


# --------------------------------------------------------------------------
# Reader (the spec's rules, checked in the order the brief fixes)
# --------------------------------------------------------------------------

class Damage(Exception):
    def __init__(self, kind, position):
        super().__init__("%s at %d" % (kind, position))
        self.kind = kind
        self.position = position


def decode_segment_header(data):
    """Returns (version, base_offset) or raises Damage at position 0."""
    if len(data) < SEG_HEADER_LEN:
        raise Damage("Truncated", 0)
    if data[0:4] != SEG_MAGIC:
        raise Damage("SegmentMagic", 0)
    version = rd16(data, 4)
    if version not in READABLE_SEGMENT_VERSIONS:
        raise Damage("SegmentVersion", 0)
    if rd16(data, 6) != 0:
        raise Damage("SegmentFlags", 0)
    if crc(data[0:24]) != rd32(data, 24):
        raise Damage("SegmentHeaderChecksum", 0)
    return version, rd64(data, 8)


def scan_segment(data):
    """Decode a whole segment file.

    Returns dict(version, base_offset, lines, next_offset, error) where error
    is None or (kind, position). `version`/`base_offset` are None when the
    header itself did not decode."""
    result = {"version": None, "base_offset": None, "lines": [],
              "next_offset": None, "error": None}
    try:
        version, base = decode_segment_header(data)
    except Damage as d:
        result["error"] = (d.kind, d.position)
        return result
    result["version"] = version
    result["base_offset"] = base
    pos = SEG_HEADER_LEN
    expect = base
    total = len(data)
    while True:
        left = total - pos
        if left == 0:
            break
        try:
            if left < REC_HEADER_LEN:
                raise Damage("Truncated", pos)
            if crc(data[pos:pos + 20]) != rd32(data, pos + 20):
                raise Damage("RecordHeaderChecksum", pos)
            word = rd32(data, pos)
            bits = word & KIND_MASK
            length = word & LEN_MASK
            if bin(bits).count("1") > 1:
                raise Damage("RecordFlags", pos)
            if version == 2 and bits & (BIT_OPEN | BIT_CONT):
                raise Damage("RecordFlags", pos)
            if version in (2, 3) and bits & BIT_GEN:
                raise Damage("RecordFlags", pos)
            if length > MAX_PAYLOAD:
                raise Damage("RecordTooLarge", pos)
            offset = rd64(data, pos + 4)
            if offset != expect:
                raise Damage("OffsetOutOfOrder", pos)
            tag_len = TAG_LEN if bits & BIT_OPEN else 0
            need = REC_HEADER_LEN + tag_len + length
            if left < need:
                raise Damage("Truncated", pos)
            body_start = pos + REC_HEADER_LEN
            tag = data[body_start:body_start + tag_len]
            payload = data[body_start + tag_len:pos + need]
            if crc(data[pos:pos + 24] + tag + payload) != rd32(data, pos + 24):
                raise Damage("RecordChecksum", pos)
        except Damage as d:
            result["error"] = (d.kind, d.position)
            break
        ts = rd64(data, pos + 12)
        line = {
            "offset": offset,
            "timestamp_micros": ts,
            "kind": None,
            "position": pos,
            "payload_base64": base64.b64encode(bytes(payload)).decode("ascii"),
        }
        if bits & BIT_OPEN:
            line["kind"] = "batch-open"
            line["producer_id"] = rd64(tag, 0)
            line["sequence"] = rd64(tag, 8)
            line["batch_len"] = rd32(tag, 16)
        elif bits & BIT_CONT:
            line["kind"] = "batch-continue"
        elif bits & BIT_GEN:
            line["kind"] = "generation-start"
            assert len(payload) == 8, "generation-start payload must be a u64"
            line["generation"] = rd64(payload, 0)
        else:
            line["kind"] = "plain"
        result["lines"].append(line)
        expect = offset + 1
        pos += need
    result["next_offset"] = expect
    return result


def read_index(data):
    """Load an index file. Returns (version, base_offset, entries) or raises
    Damage (position is the start of the file; the header is one unit)."""
    if len(data) < IDX_HEADER_LEN:
        raise Damage("Truncated", 0)
    if data[0:4] != IDX_MAGIC:
        raise Damage("IndexMagic", 0)
    version = rd16(data, 4)
    if version not in READABLE_INDEX_VERSIONS:
        raise Damage("IndexVersion", 0)
    if rd16(data, 6) != 0:
        raise Damage("SegmentFlags", 0)  # the spec defines no IndexFlags kind
    base = rd64(data, 8)
    whole = (len(data) - IDX_HEADER_LEN) // IDX_ENTRY_LEN  # torn tail ignored
    entries = []
    for i in range(whole):
        at = IDX_HEADER_LEN + i * IDX_ENTRY_LEN
        entries.append([rd64(data, at), rd64(data, at + 8)])
    return version, base, entries


# --------------------------------------------------------------------------
# fsck model over a data root
# --------------------------------------------------------------------------

OPT_IN_TAIL_KINDS = ("RecordHeaderChecksum", "RecordChecksum", "OffsetOutOfOrder",
                     "RecordTooLarge")


def is_segment_name(name):
    return len(name) == 24 and name.endswith(".log") and name[:20].isdigit() \
        and all(c in "0123456789" for c in name[:20])


def fsck_root(root, repair_checksum_tail=False):
    shards = []
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if entry.startswith(".") or not os.path.isdir(path):
            continue
        seg_names = [n for n in os.listdir(path)
                     if is_segment_name(n) and os.path.isfile(os.path.join(path, n))]
        if not seg_names:
            continue
        seg_ids = sorted(int(n[:20]) for n in seg_names)
        shards.append(fsck_shard(entry, path, seg_ids, repair_checksum_tail))
    return {"shards": shards}


def fsck_shard(name, path, seg_ids, repair_checksum_tail):
    problems = []
    newest = seg_ids[-1]
    records = 0
    first_offset = None
    next_offset = None
    prev_next = None          # next offset of the previous segment, if known
    blank_first = False

    if len(seg_ids) == 1:
        only = os.path.join(path, "%020d.log" % seg_ids[0])
        with open(only, "rb") as f:
            data = f.read()
        if len(data) < SEG_HEADER_LEN or data == bytes(SEG_HEADER_LEN):
            blank_first = True

    for sid in seg_ids:
        log_name = "%020d.log" % sid
        with open(os.path.join(path, log_name), "rb") as f:
            data = f.read()
        scan = scan_segment(data)
        header_ok = scan["base_offset"] is not None

        if header_ok and prev_next is not None and scan["base_offset"] != prev_next:
            problems.append({"file": log_name, "kind": "OffsetOutOfOrder",
                             "segment": sid, "position": 8, "repairable": False})

        if scan["error"] is not None:
            kind, position = scan["error"]
            if not header_ok:
                repairable = blank_first
            elif sid != newest or kind == "RecordFlags":
                repairable = False
            elif kind == "Truncated":
                repairable = True
            elif kind in OPT_IN_TAIL_KINDS:
                repairable = repair_checksum_tail
            else:
                raise AssertionError("unclassified damage " + kind)
            problems.append({"file": log_name, "kind": kind, "segment": sid,
                             "position": position, "repairable": repairable})

        if header_ok:
            records += len(scan["lines"])
            if first_offset is None and sid == seg_ids[0]:
                first_offset = scan["base_offset"]
            prev_next = scan["next_offset"]
            next_offset = scan["next_offset"]
            idx_name = "%020d.index" % sid
            idx_path = os.path.join(path, idx_name)
            idx_problem = None
            if not os.path.isfile(idx_path):
                idx_problem = ("IndexMissing", 0)
            else:
                with open(idx_path, "rb") as f:
                    idata = f.read()
                try:
                    _, ibase, _ = read_index(idata)
                    if ibase != scan["base_offset"]:
                        idx_problem = ("IndexBaseOffset", 8)
                except Damage as d:
                    idx_problem = (d.kind, d.position)
            if idx_problem is not None:
                problems.append({"file": idx_name, "kind": idx_problem[0], "segment": sid,
                                 "position": idx_problem[1], "repairable": True})
        else:
            # Header undecodable: nothing known about this segment's offsets.
            prev_next = None

    if first_offset is None:
        first_offset = 0
    if next_offset is None:
        next_offset = 0
    if blank_first:
        records, first_offset, next_offset = 0, 0, 0

    index_kinds = ("IndexMissing", "IndexMagic", "IndexVersion", "IndexBaseOffset")
    seg_problems = [p for p in problems if not p["file"].endswith(".index")]
    if any(not p["repairable"] for p in problems):
        verdict = "corrupt"
    elif seg_problems:
        verdict = "repairable"
    else:
        verdict = "ok"
    assert all(p["kind"] not in index_kinds for p in seg_problems)
    return {"dir": name, "verdict": verdict, "records": records,
            "first_offset": first_offset, "next_offset": next_offset,
            "problems": problems}


# --------------------------------------------------------------------------
# Golden vectors from the spec: prove the writer before trusting it
# --------------------------------------------------------------------------

def assert_golden_vectors():
    want_header = bytes.fromhex(
        "464C5347" "0003" "0000"
        "0000000000000001"
        "0000000000000002"
        "ADEB65E9"
        "00000000")
    got = segment_header(1, 2)
    assert got == want_header, "segment header vector: " + got.hex()
    assert decode_segment_header(got) == (3, 1)

    want_v4 = bytearray(want_header)
    want_v4[4:6] = b"\x00\x04"
    want_v4[24:28] = bytes.fromhex("E7D5EEA2")
    got4 = segment_header(1, 2, version=4)
    assert got4 == bytes(want_v4), "v4 header vector: " + got4.hex()

    want_rec = bytes.fromhex(
        "00000002"
        "0000000000000007"
        "0000000000000009"
        "C654DE27"
        "24 02 15 2C".replace(" ", "")
        + "6869")
    got_rec = encode_record(7, 9, b"hi")
    assert len(want_rec) == 30
    assert got_rec == want_rec, "record vector: " + got_rec.hex()

    # The reader must agree with the writer on the vectors as well.
    scan = scan_segment(segment_header(7, 2) + got_rec)
    assert scan["error"] is None and len(scan["lines"]) == 1
    line = scan["lines"][0]
    assert (line["offset"], line["timestamp_micros"], line["position"]) == (7, 9, 32)
    assert base64.b64decode(line["payload_base64"]) == b"hi"
    print("golden vectors: segment header (v3 + v4) and record match the spec")


# --------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------

def write_file(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(bytes(data))


def write_json(path, obj):
    write_file(path, (json.dumps(obj, indent=2) + "\n").encode("utf-8"))


def dump_lines(lines, error):
    out = []
    for line in lines:
        out.append(json.dumps(line, separators=(",", ":")))
    if error is not None:
        out.append(json.dumps({"error": error[0], "position": error[1]},
                              separators=(",", ":")))
    return ("".join(s + "\n" for s in out)).encode("utf-8")


# --------------------------------------------------------------------------
# A. single segments
# --------------------------------------------------------------------------

def three_plain(base=0, version=3):
    s = Segment(base, version)
    for _ in range(3):
        s.plain(order_payload(s.next_offset))
    return s


def build_segments(out_dir):
    cases = []  # (name, bytes, expected_lines, expected_error)

    def valid(name, seg):
        cases.append((name, bytes(seg.data), list(seg.lines), None))

    def damaged(name, data, seg, keep, error):
        """keep = how many of seg's intended records precede the damage."""
        cases.append((name, bytes(data), list(seg.lines[:keep]), error))

    # ---- valid files ----
    s = Segment(0)
    s.plain(b"hello")
    s.plain(b"")                               # empty payload
    s.plain(pattern_payload(5 * 1024, 11))     # 5 KiB payload
    s.plain(order_payload(3))
    valid("v3-plain", s)

    valid("v3-empty", Segment(0))
    valid("v2-empty", Segment(0, version=2))

    s = Segment(0, version=2)
    s.plain(order_payload(0)).plain(b"").plain(order_payload(2)).plain(pattern_payload(300, 5))
    valid("v2-plain", s)

    s = Segment(0)
    s.batch(42, 0, [b"b0-r0", b"b0-r1", b"b0-r2"])   # open + 2 continues
    s.plain(order_payload(3))                       # ordinary record between batches
    s.batch(42, 1, [b"b1-only"])                    # batch of one
    s.batch(0xFEEDFACECAFEBEEF, 9000000000, [b"", b"x" * 40])  # big ids, empty first
    s.plain(b"tail")
    valid("v3-batches", s)

    s = Segment(10, version=4)
    s.generation_start(3)
    s.plain(order_payload(11)).plain(order_payload(12))
    s.batch(5, 17, [b"g-b0", b"g-b1"])
    s.plain(b"")
    valid("v4-generation-start", s)

    s = Segment(1000)
    for _ in range(4):
        s.plain(order_payload(s.next_offset))
    valid("v3-base-offset-1000", s)

    many = Segment(0)
    for i in range(100):
        many.plain(pattern_payload(90, 1000 + i))   # 118-byte records
    valid("v3-many-records", many)

    # ---- segment-header damage ----
    s = three_plain()
    damaged("bad-magic", bytes(segment_header(0, CREATED_AT, magic=b"FLSX")) + s.data[32:],
            s, 0, ("SegmentMagic", 0))
    damaged("index-magic-in-segment", bytes(segment_header(0, CREATED_AT, magic=IDX_MAGIC))
            + s.data[32:], s, 0, ("SegmentMagic", 0))
    damaged("all-zero-header", bytes(32), s, 0, ("SegmentMagic", 0))
    damaged("version-1", segment_header(0, CREATED_AT, version=1) + s.data[32:],
            s, 0, ("SegmentVersion", 0))
    damaged("version-5", segment_header(0, CREATED_AT, version=5) + s.data[32:],
            s, 0, ("SegmentVersion", 0))
    damaged("flags-nonzero", segment_header(0, CREATED_AT, flags=1) + s.data[32:],
            s, 0, ("SegmentFlags", 0))
    damaged("bad-header-crc", segment_header(0, CREATED_AT, bad_crc=True) + s.data[32:],
            s, 0, ("SegmentHeaderChecksum", 0))
    damaged("short-20-bytes", s.data[:20], s, 0, ("Truncated", 0))
    damaged("zero-bytes", b"", s, 0, ("Truncated", 0))
    damaged("short-31-bytes", s.data[:31], s, 0, ("Truncated", 0))

    # ---- torn tails ----
    s = three_plain()
    s.plain(order_payload(3))
    p = s.positions[3]
    damaged("torn-record-header", s.data[:p + 15], s, 3, ("Truncated", p))
    damaged("torn-record-payload", s.data[:p + 28 + 5], s, 3, ("Truncated", p))
    damaged("torn-record-no-payload", s.data[:p + 28], s, 3, ("Truncated", p))

    s = three_plain()
    s.batch(77, 4, [b"batch-payload-0", b"batch-payload-1"])
    p = s.positions[3]
    damaged("torn-batch-tag", s.data[:p + 28 + 10], s, 3, ("Truncated", p))

    # ---- rot inside otherwise complete records ----
    s = three_plain()
    p = s.positions[1]
    damaged("payload-bitflip", flip_bit(s.data, p + 28 + 3, 0x10), s, 1, ("RecordChecksum", p))
    damaged("length-bitflip", flip_bit(s.data, p + 3, 0x02), s, 1, ("RecordHeaderChecksum", p))
    damaged("timestamp-bitflip", flip_bit(s.data, p + 19, 0x01), s, 1,
            ("RecordHeaderChecksum", p))
    damaged("checksum-field-bitflip", flip_bit(s.data, p + 25, 0x80), s, 1,
            ("RecordChecksum", p))

    s = three_plain()
    s.batch(77, 4, [b"batch-payload-0", b"batch-payload-1"])
    p = s.positions[3]
    damaged("tag-bitflip", flip_bit(s.data, p + 28 + 7, 0x01), s, 3, ("RecordChecksum", p))

    # ---- consistent CRCs but illegal content ----
    s = Segment(0)
    s.plain(order_payload(0)).plain(order_payload(1))
    p = len(s.data)
    s.plain(order_payload(3), offset=3)   # offset 2 skipped
    damaged("offset-gap", s.data, s, 2, ("OffsetOutOfOrder", p))

    s = Segment(5)
    s.plain(order_payload(6), offset=6)
    damaged("first-offset-mismatch", s.data, s, 0, ("OffsetOutOfOrder", 32))

    s = Segment(0)
    s.plain(order_payload(0)).plain(order_payload(1))
    p = len(s.data)
    s.plain(order_payload(1), offset=1)   # repeated offset
    damaged("offset-repeated", s.data, s, 2, ("OffsetOutOfOrder", p))

    s = three_plain()
    p = len(s.data)
    s.raw(encode_record(3, default_ts(3), b"both", BIT_OPEN | BIT_CONT, (1, 1, 2)))
    s.plain(order_payload(4), offset=4)
    damaged("kind-bits-30-31", s.data, s, 3, ("RecordFlags", p))

    s = Segment(0, version=4)
    s.generation_start(2)
    p = len(s.data)
    s.raw(encode_record(1, default_ts(1), be64(2), BIT_GEN | BIT_CONT))
    damaged("kind-bits-29-30-v4", s.data, s, 1, ("RecordFlags", p))

    s = Segment(0, version=4)
    p = len(s.data)
    s.raw(encode_record(0, default_ts(0), b"all", BIT_GEN | BIT_CONT | BIT_OPEN, (1, 1, 1)))
    damaged("kind-bits-all-v4", s.data, s, 0, ("RecordFlags", p))

    s = Segment(0, version=2)
    s.plain(order_payload(0))
    p = len(s.data)
    s.raw(encode_record(1, default_ts(1), b"marked", BIT_OPEN, (9, 0, 1)))
    damaged("batch-open-in-v2", s.data, s, 1, ("RecordFlags", p))

    s = Segment(0, version=2)
    s.plain(order_payload(0))
    p = len(s.data)
    s.raw(encode_record(1, default_ts(1), b"continued", BIT_CONT))
    damaged("batch-continue-in-v2", s.data, s, 1, ("RecordFlags", p))

    s = Segment(0, version=3)
    p = len(s.data)
    s.raw(encode_record(0, default_ts(0), be64(4), BIT_GEN))
    s.plain(order_payload(1), offset=1)
    damaged("generation-start-in-v3", s.data, s, 0, ("RecordFlags", p))

    s = Segment(0, version=2)
    p = len(s.data)
    s.raw(encode_record(0, default_ts(0), be64(4), BIT_GEN))
    damaged("generation-start-in-v2", s.data, s, 0, ("RecordFlags", p))

    # payload_len one past the limit; the header is self-consistent and the
    # file stops right after it, so the reader must object to the size
    # without ever wanting the payload bytes.
    s = Segment(0)
    s.plain(order_payload(0)).plain(order_payload(1))
    p = len(s.data)
    forged = encode_record(2, default_ts(2), b"", length_field=MAX_PAYLOAD + 1)[:REC_HEADER_LEN]
    s.raw(forged)
    damaged("too-large", s.data, s, 2, ("RecordTooLarge", p))

    # Exactly at the limit is legal, so the same shape is merely Truncated.
    s = Segment(0)
    s.plain(order_payload(0)).plain(order_payload(1))
    p = len(s.data)
    forged = encode_record(2, default_ts(2), b"", length_field=MAX_PAYLOAD)[:REC_HEADER_LEN]
    s.raw(forged)
    damaged("max-len-truncated", s.data, s, 2, ("Truncated", p))

    # ---- write + cross-check with the reader ----
    seg_dir = os.path.join(out_dir, "segments")
    for name, data, lines, error in cases:
        scan = scan_segment(data)
        if scan["lines"] != lines or scan["error"] != error:
            raise AssertionError("segment %s: reader says %r / %r, writer meant %r / %r"
                                 % (name, scan["lines"], scan["error"], lines, error))
        write_file(os.path.join(seg_dir, name + ".log"), data)
        write_file(os.path.join(seg_dir, name + ".expected-dump.jsonl"), dump_lines(lines, error))
    return many


# --------------------------------------------------------------------------
# B. indexes
# --------------------------------------------------------------------------

def build_indexes(out_dir, many):
    idx_dir = os.path.join(out_dir, "indexes")
    entries = many.index_entries()
    assert len(entries) > 2, entries  # several entries, not just the first
    base1000 = Segment(1000)
    for _ in range(4):
        base1000.plain(order_payload(base1000.next_offset))

    good = index_bytes(0, entries, 3)
    cases = [
        ("v3-many-records", good, {"base_offset": 0, "version": 3, "entries": entries}),
        ("v2-many-records", index_bytes(0, entries, 2),
         {"base_offset": 0, "version": 2, "entries": entries}),
        ("v4-many-records", index_bytes(0, entries, 4),
         {"base_offset": 0, "version": 4, "entries": entries}),
        ("v3-base-offset-1000", base1000.index(3),
         {"base_offset": 1000, "version": 3, "entries": base1000.index_entries()}),
        ("header-only", index_bytes(0, [], 3), {"base_offset": 0, "version": 3, "entries": []}),
        ("torn-final-entry", good + be64(entries[-1][0] + 35)[:7],
         {"base_offset": 0, "version": 3, "entries": entries}),
        ("torn-final-entry-15", good + (be64(999) + be64(9999))[:15],
         {"base_offset": 0, "version": 3, "entries": entries}),
        ("bad-magic", index_bytes(0, entries, 3, magic=SEG_MAGIC), {"error": "IndexMagic"}),
        ("version-9", index_bytes(0, entries, 9), {"error": "IndexVersion"}),
        ("version-1", index_bytes(0, entries, 1), {"error": "IndexVersion"}),
        ("flags-nonzero", index_bytes(0, entries, 3, flags=0x0001), {"error": "SegmentFlags"}),
        ("short-10-bytes", good[:10], {"error": "Truncated"}),
        ("short-23-bytes", good[:23], {"error": "Truncated"}),
    ]
    for name, data, expected in cases:
        expected = json.loads(json.dumps(expected))  # tuples -> lists
        try:
            version, base, got_entries = read_index(data)
            got = {"base_offset": base, "version": version, "entries": got_entries}
        except Damage as d:
            got = {"error": d.kind}
        if got != expected:
            raise AssertionError("index %s: reader %r, meant %r" % (name, got, expected))
        write_file(os.path.join(idx_dir, name + ".index"), data)
        write_json(os.path.join(idx_dir, name + ".expected.json"), expected)


# --------------------------------------------------------------------------
# C. data roots
# --------------------------------------------------------------------------

def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def marker_name(tenant, namespace, stream):
    """The .streams/ marker's file name: the shard-directory naming rules without the shard number."""
    key = b"".join(be64(len(p.encode())) + p.encode() for p in (tenant, namespace, stream))
    readable = "_".join("".join(c if c.isascii() and (c.isalnum() or c == "-") else "_" for c in p)
                        for p in (tenant, namespace, stream))
    return "%s-%016x" % (readable, fnv1a64(key))


def stream_marker(tenant, namespace, stream):
    """A .streams/ marker in the project's own text format (docs/storage-format.md)."""
    text = ("felix-stream-marker 1\ntenant=%s\nnamespace=%s\nstream=%s\nincarnation=none\n"
            "delete_unfinished=false\ndeleted_through=none\n" % (tenant, namespace, stream)).encode()
    return text + ("crc32=%08x\n" % crc(text)).encode()


def with_crc(head):
    """A side file whose last four bytes are the CRC-32 of everything before them."""
    return head + be32(crc(head))


def epochs_file(pairs):
    body = b"".join(be64(g) + be64(o) for g, o in pairs)
    return b"FLEP" + be16(1) + be16(len(pairs)) + be32(crc(body)) + body


def put_segment(shard_dir, seg_id, data, index=None):
    write_file(os.path.join(shard_dir, "%020d.log" % seg_id), data)
    if index is not None:
        write_file(os.path.join(shard_dir, "%020d.index" % seg_id), index)


def chain(base, sizes, versions=None, seed=0):
    """Contiguous segments: sizes[i] plain records in segment i."""
    segs = []
    nxt = base
    for i, n in enumerate(sizes):
        v = versions[i] if versions else 3
        s = Segment(nxt, v, created_at=CREATED_AT + i * 60_000_000)
        for _ in range(n):
            off = s.next_offset
            s.plain(order_payload(off) if (off + seed) % 5 else pattern_payload(200, off + seed))
        segs.append(s)
        nxt = s.next_offset
    return segs


def put_chain(shard_dir, ids, segs, with_index=True):
    for sid, s in zip(ids, segs):
        put_segment(shard_dir, sid, s.data, s.index() if with_index else None)


S_ORDERS0 = "acme_default_orders_0-0d3aed4b998d2798"
S_ORDERS1 = "acme_default_orders_1-5e41c2a09d7b3f60"
S_PAYMENTS0 = "acme_default_payments_0-9a3c41e07b5d2f16-0006411a0ccf2e40"
S_AUDIT0 = "acme_billing_audit_0-c07e1f9a22d4b851"
S_EVENTS0 = "acme_default_events_0-71b9e0d4a3c6f528"
S_EVENTS1 = "acme_default_events_1-2d8f5a1c0e9b7463"
S_CLICKS0 = "acme_web_clicks_0-e3a0b6c1d5f94872"


def build_roots(out_dir):
    roots_dir = os.path.join(out_dir, "roots")
    # hand-stated intent per root: {dir: (verdict, [(file, kind, repairable)...])}
    intents = {}
    repair_intents = {}

    # ---------------- healthy ----------------
    r = os.path.join(roots_dir, "healthy")
    write_file(os.path.join(r, "storage-id"), with_crc(b"FLID" + be16(1) + be16(0) + pattern_payload(16, 3)))
    write_file(os.path.join(r, "run-state"), with_crc(b"FLRN" + be16(1) + b"\x02\x00" + pattern_payload(16, 3)))

    d = os.path.join(r, S_ORDERS0)       # segment ids 0, 7, 12, contiguous offsets
    segs = chain(0, [5, 4, 3])
    put_chain(d, [0, 7, 12], segs)
    write_file(os.path.join(d, "epochs"), epochs_file([(1, 0)]))
    write_file(os.path.join(d, "foo.log.tmp"), b"not a segment\n")
    write_file(os.path.join(d, "00000000000000000013.log.tmp"), bytes(40))
    write_file(os.path.join(d, "13.log"), bytes(40))              # not 20 digits
    write_file(os.path.join(d, "0000000000000000001x.log"), bytes(40))  # not all digits

    d = os.path.join(r, S_ORDERS1)       # starts at offset 500; an old v2 segment
    s3 = Segment(500, version=2)
    for _ in range(6):
        s3.plain(order_payload(s3.next_offset))
    s4 = Segment(s3.next_offset, version=3, created_at=CREATED_AT + 3_600_000_000)
    s4.batch(1234, 0, [b"p0", b"p1", b"p2"])
    s4.plain(pattern_payload(5000, 4))
    s4.batch(1234, 1, [b"single"])
    put_chain(d, [3, 4], [s3, s4])
    # The snapshot as of the tail: producer 1234 with its two batches, nothing open.
    batches = [(s4.base_offset, 3), (s4.next_offset - 1, 1)]
    body = b"\x00" + be64(1234) + be64(1) + be16(len(batches)) + b"".join(be64(f) + be32(n) for f, n in batches)
    write_file(os.path.join(d, "producers"), b"FLPS" + be16(1) + be16(0) + be64(s4.next_offset) + be32(1)
               + be32(crc(body)) + body)

    d = os.path.join(r, S_PAYMENTS0)     # incarnated name; v3 then v4 with generation start
    s0 = chain(0, [4])[0]
    s1 = Segment(s0.next_offset, version=4, created_at=CREATED_AT + 120_000_000)
    s1.generation_start(2)
    s1.plain(order_payload(5)).plain(order_payload(6))
    put_chain(d, [0, 1], [s0, s1])
    write_file(os.path.join(d, "epochs"), epochs_file([(1, 0), (2, 4)]))
    write_file(os.path.join(d, "replica"), with_crc(b"FLRS" + be16(1) + be16(0) + be64(2) + be64(7)))

    # Never shards: dot directories (even with segment-named files) and
    # directories without any segment file.
    junk_seg = segment_header(0, CREATED_AT, magic=b"XXXX")
    write_file(os.path.join(r, ".deleted", S_ORDERS0 + "-0000000000000001",
                            "00000000000000000000.log"), junk_seg)
    write_file(os.path.join(r, ".deleted", S_ORDERS0 + "-0000000000000001",
                            "00000000000000000000.index"), b"junk")
    write_file(os.path.join(r, ".deleted", "00000000000000000000.log"), junk_seg)
    write_file(os.path.join(r, ".streams", marker_name("acme", "default", "orders")),
               stream_marker("acme", "default", "orders"))
    write_file(os.path.join(r, ".streams", "00000000000000000000.log"), junk_seg)
    write_file(os.path.join(r, "scratch", "notes.txt"), b"no segments here\n")
    write_file(os.path.join(r, "scratch", "00000000000000000000.log.tmp"), junk_seg)

    intents["healthy"] = {S_ORDERS0: ("ok", [], 12, 0, 12),
                          S_ORDERS1: ("ok", [], 11, 500, 511),
                          S_PAYMENTS0: ("ok", [], 7, 0, 7)}

    # ---------------- torn-tail ----------------
    r = os.path.join(roots_dir, "torn-tail")
    d = os.path.join(r, S_ORDERS0)       # newest segment cut mid-payload
    segs = chain(0, [4, 4])
    put_chain(d, [0, 1], segs)
    last = segs[1]
    cut = last.positions[3] + 28 + 6
    put_segment(d, 1, last.data[:cut])
    d = os.path.join(r, S_ORDERS1)       # single segment cut inside a record header
    segs = chain(0, [3])
    segs[0].plain(order_payload(3))
    put_segment(d, 0, segs[0].data[:segs[0].positions[3] + 11], segs[0].index())
    d = os.path.join(r, S_EVENTS0)       # healthy neighbour
    put_chain(d, [0], chain(0, [2]))
    intents["torn-tail"] = {
        S_ORDERS0: ("repairable", [("00000000000000000001.log", "Truncated", True)], 7, 0, 7),
        S_ORDERS1: ("repairable", [("00000000000000000000.log", "Truncated", True)], 3, 0, 3),
        S_EVENTS0: ("ok", [], 2, 0, 2)}

    # ---------------- checksum-tail ----------------
    r = os.path.join(roots_dir, "checksum-tail")
    d = os.path.join(r, S_ORDERS0)       # last record's payload bit flipped
    segs = chain(0, [3, 4])
    put_chain(d, [0, 1], segs)
    last = segs[1]
    put_segment(d, 1, flip_bit(last.data, last.positions[3] + 28 + 2, 0x04))
    d = os.path.join(r, S_ORDERS1)       # length bit flipped in newest segment
    segs = chain(0, [2, 3])
    put_chain(d, [0, 1], segs)
    put_segment(d, 1, flip_bit(segs[1].data, segs[1].positions[2] + 3, 0x01))
    d = os.path.join(r, S_EVENTS0)       # offset jump in newest segment, CRCs valid
    segs = chain(0, [2])
    segs[0].plain(order_payload(9), offset=9)
    put_chain(d, [0], segs)
    d = os.path.join(r, S_EVENTS1)       # impossible length in newest segment
    segs = chain(0, [2, 1])
    segs[1].raw(encode_record(3, default_ts(3), b"", length_field=MAX_PAYLOAD + 1)
                [:REC_HEADER_LEN])
    put_chain(d, [0, 1], segs)
    d = os.path.join(r, S_CLICKS0)       # flags damage in newest: never repairable
    segs = chain(0, [2])
    segs[0].raw(encode_record(2, default_ts(2), b"x", BIT_OPEN | BIT_CONT, (1, 1, 1)))
    put_chain(d, [0], segs)

    base_ct = {
        S_ORDERS0: ("00000000000000000001.log", "RecordChecksum", 6, 0, 6),
        S_ORDERS1: ("00000000000000000001.log", "RecordHeaderChecksum", 4, 0, 4),
        S_EVENTS0: ("00000000000000000000.log", "OffsetOutOfOrder", 2, 0, 2),
        S_EVENTS1: ("00000000000000000001.log", "RecordTooLarge", 3, 0, 3),
    }
    intents["checksum-tail"] = {k: ("corrupt", [(f, kind, False)], n, a, b)
                                for k, (f, kind, n, a, b) in base_ct.items()}
    repair_intents["checksum-tail"] = {k: ("repairable", [(f, kind, True)], n, a, b)
                                       for k, (f, kind, n, a, b) in base_ct.items()}
    flags_case = ("corrupt", [("00000000000000000000.log", "RecordFlags", False)], 2, 0, 2)
    intents["checksum-tail"][S_CLICKS0] = flags_case
    repair_intents["checksum-tail"][S_CLICKS0] = flags_case

    # ---------------- older-damage ----------------
    r = os.path.join(roots_dir, "older-damage")
    d = os.path.join(r, S_ORDERS0)       # RecordChecksum in the middle segment of three
    segs = chain(0, [3, 4, 2])
    put_chain(d, [0, 1, 2], segs)
    mid = segs[1]
    put_segment(d, 1, flip_bit(mid.data, mid.positions[1] + 28 + 1, 0x20))
    d = os.path.join(r, S_ORDERS1)       # a torn write in a non-newest segment
    segs = chain(100, [3, 2])
    put_chain(d, [0, 1], segs)
    put_segment(d, 0, segs[0].data[:segs[0].positions[2] + 30])
    # Damage stops the older segment's scan early, so the segment after it no
    # longer lines up with "one past the last valid record": that is reported
    # too (OffsetOutOfOrder at position 8 of the later segment).
    intents["older-damage"] = {
        S_ORDERS0: ("corrupt", [("00000000000000000001.log", "RecordChecksum", False),
                                ("00000000000000000002.log", "OffsetOutOfOrder", False)],
                    3 + 1 + 2, 0, 9),
        S_ORDERS1: ("corrupt", [("00000000000000000000.log", "Truncated", False),
                                ("00000000000000000001.log", "OffsetOutOfOrder", False)],
                    2 + 2, 100, 105)}

    # ---------------- blank-first ----------------
    r = os.path.join(roots_dir, "blank-first")
    put_segment(os.path.join(r, S_ORDERS0), 0, b"")
    put_segment(os.path.join(r, S_ORDERS1), 0, bytes(32))
    put_segment(os.path.join(r, S_EVENTS0), 0, bytes(132))
    intents["blank-first"] = {
        S_ORDERS0: ("repairable", [("00000000000000000000.log", "Truncated", True)], 0, 0, 0),
        S_ORDERS1: ("repairable", [("00000000000000000000.log", "SegmentMagic", True)], 0, 0, 0),
        S_EVENTS0: ("corrupt", [("00000000000000000000.log", "SegmentMagic", False)], 0, 0, 0)}

    # ---------------- index-problems ----------------
    r = os.path.join(roots_dir, "index-problems")
    d = os.path.join(r, S_ORDERS0)
    segs = chain(0, [2, 2, 2, 2])
    for sid, s in zip(range(4), segs):
        put_segment(d, sid, s.data)
    # 0: no index at all
    write_file(os.path.join(d, "00000000000000000001.index"), segs[1].index()[:10])  # short
    write_file(os.path.join(d, "00000000000000000002.index"),
               index_bytes(segs[2].base_offset + 1, segs[2].index_entries()))     # wrong base
    write_file(os.path.join(d, "00000000000000000003.index"), pattern_payload(64, 99))  # garbage
    d = os.path.join(r, S_ORDERS1)
    segs = chain(0, [1, 1, 1, 1, 1])
    for sid, s in zip(range(5), segs):
        put_segment(d, sid, s.data)
    write_file(os.path.join(d, "00000000000000000000.index"),
               index_bytes(0, segs[0].index_entries(), version=9))                  # version
    write_file(os.path.join(d, "00000000000000000001.index"),
               index_bytes(1, segs[1].index_entries(), flags=2))                    # flags
    write_file(os.path.join(d, "00000000000000000002.index"),
               index_bytes(2, segs[2].index_entries()) + b"\x00\x00\x00")           # torn entry: fine
    write_file(os.path.join(d, "00000000000000000003.index"), index_bytes(3, []))  # header only: fine
    write_file(os.path.join(d, "00000000000000000004.index"), b"")                 # empty -> Truncated
    intents["index-problems"] = {
        S_ORDERS0: ("ok", [("00000000000000000000.index", "IndexMissing", True),
                           ("00000000000000000001.index", "Truncated", True),
                           ("00000000000000000002.index", "IndexBaseOffset", True),
                           ("00000000000000000003.index", "IndexMagic", True)], 8, 0, 8),
        S_ORDERS1: ("ok", [("00000000000000000000.index", "IndexVersion", True),
                           ("00000000000000000001.index", "SegmentFlags", True),
                           ("00000000000000000004.index", "Truncated", True)], 5, 0, 5)}

    # ---------------- gap ----------------
    r = os.path.join(roots_dir, "gap")
    d = os.path.join(r, S_ORDERS0)       # second segment starts past the first's end
    a = chain(0, [3])[0]
    b = chain(5, [2])[0]
    put_chain(d, [0, 1], [a, b])
    d = os.path.join(r, S_ORDERS1)       # second segment overlaps the first
    a = chain(0, [3])[0]
    b = chain(2, [2])[0]
    put_chain(d, [0, 1], [a, b])
    d = os.path.join(r, S_EVENTS0)       # contiguous across a gap in ids: fine
    put_chain(d, [2, 9], chain(40, [2, 2]))
    intents["gap"] = {
        S_ORDERS0: ("corrupt", [("00000000000000000001.log", "OffsetOutOfOrder", False)], 5, 0, 7),
        S_ORDERS1: ("corrupt", [("00000000000000000001.log", "OffsetOutOfOrder", False)], 5, 0, 4),
        S_EVENTS0: ("ok", [], 4, 40, 44)}

    # ---------------- run fsck model, compare with intent, write ----------------
    for name in sorted(intents):
        root = os.path.join(roots_dir, name)
        report = fsck_root(root)
        check_intent(name, report, intents[name])
        write_json(os.path.join(roots_dir, name + ".expected-fsck.json"), report)
        if name in repair_intents:
            report = fsck_root(root, repair_checksum_tail=True)
            check_intent(name + " (repair)", report, repair_intents[name])
            write_json(os.path.join(roots_dir, name + ".expected-fsck-repair.json"), report)


def check_intent(name, report, intent):
    dirs = [s["dir"] for s in report["shards"]]
    if dirs != sorted(intent):
        raise AssertionError("root %s: shards %r, meant %r" % (name, dirs, sorted(intent)))
    for shard in report["shards"]:
        verdict, probs, records, first, nxt = intent[shard["dir"]]
        got = [(p["file"], p["kind"], p["repairable"]) for p in shard["problems"]]
        summary = (shard["verdict"], got, shard["records"], shard["first_offset"],
                   shard["next_offset"])
        if summary != (verdict, probs, records, first, nxt):
            raise AssertionError("root %s shard %s: got %r, meant %r"
                                 % (name, shard["dir"], summary,
                                    (verdict, probs, records, first, nxt)))


# --------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    out_dir = os.path.join(repo, "local-log", "src", "test", "resources", "golden")

    assert_golden_vectors()

    if os.path.exists(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)

    many = build_segments(out_dir)
    build_indexes(out_dir, many)
    build_roots(out_dir)

    total = 0
    count = 0
    for dirpath, _, files in os.walk(out_dir):
        for f in files:
            total += os.path.getsize(os.path.join(dirpath, f))
            count += 1
    assert total < 2 * 1024 * 1024, "fixtures too large: %d bytes" % total
    print("wrote %d files, %d bytes, under %s" % (count, total, os.path.relpath(out_dir, repo)))


if __name__ == "__main__":
    sys.exit(main())
