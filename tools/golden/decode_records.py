#!/usr/bin/env python3
"""Decode a raw /read answer (records back to back, as a segment stores them) with the
independent reader in gen_golden.py, and print one JSON line per record, as `read --json` does
(without `source`), or one error line and exit 1 when a record does not verify.

    curl -s -H 'Accept: application/octet-stream' \
        'http://127.0.0.1:9464/read?shard=SHARD&from=OFFSET' > answer.bin
    python3 tools/golden/decode_records.py answer.bin OFFSET

OFFSET is the `from` of the request: the first record must carry it. The records get a synthetic
v4 segment header (every record kind is allowed in v4), then the golden reader scans them exactly
as it scans a segment file: each record's header CRC, checksum, kind bits and offset order.
Positions in the output are byte positions in the answer.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_golden as golden  # noqa: E402  (the spec's reader, written from the spec alone)


def decode(answer, first_offset):
    data = golden.segment_header(first_offset, 0, version=4) + answer
    result = golden.scan_segment(data)
    lines = []
    for line in result["lines"]:
        line = dict(line)
        line["position"] -= golden.SEG_HEADER_LEN
        lines.append(line)
    error = result["error"]
    if error is not None:
        error = {"error": error[0], "position": error[1] - golden.SEG_HEADER_LEN}
    return lines, error


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        answer = f.read()
    lines, error = decode(answer, int(argv[2]))
    for line in lines:
        print(json.dumps(line, separators=(",", ":")))
    if error is not None:
        print(json.dumps(error, separators=(",", ":")))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
