"""Flips bits in the weights of a cortiq artifact in place, without touching its header or plan
(so the header checksum still holds): each argument WEIGHT:BYTE:BIT flips bit BIT of byte BYTE of
weight WEIGHT (negative indices count from the end, -1 the last weight / its last byte).

Reads the header (runtime/artifact.h: magic, version, file/metadata/weights offsets and sizes)
and the weight records of the plan (runtime/plan_encoding.h, format 3: a model record, then a
u64 count of weight records, each a u32 size and name, format, shape, offset, size_bytes, ...).
"""
import struct
import sys


def weights(data):
    (metadata_offset, metadata_size, weights_offset) = struct.unpack_from("<QQQ", data, 24)
    pos = metadata_offset
    (model_size,) = struct.unpack_from("<I", data, pos)
    pos += 4 + model_size
    (count,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    result = []
    for _ in range(count):
        (size,) = struct.unpack_from("<I", data, pos)
        at = pos + 4
        (name_length,) = struct.unpack_from("<I", data, at)
        at += 4 + name_length + 4  # name, format
        (rank,) = struct.unpack_from("<I", data, at)
        at += 4 + 8 * rank
        offset, size_bytes = struct.unpack_from("<QQ", data, at)
        result.append((weights_offset + offset, size_bytes))
        pos += 4 + size
    return result


def main():
    path = sys.argv[1]
    data = bytearray(open(path, "rb").read())
    assert data[:8] == b"CORTIQ\0\1", "not a cortiq artifact"
    table = weights(data)
    for spec in sys.argv[2:]:
        w, byte, bit = (int(x) for x in spec.split(":"))
        start, size = table[w]
        data[start + (byte % size)] ^= 1 << bit
    open(path, "wb").write(data)


main()
