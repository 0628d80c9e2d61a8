"""TFRecord event files written byte by byte for the object-storage tests
(scalar summaries; CRC-32C masked as TFRecord does)."""
import struct


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(b):
    c = crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(n)) + data + \
        struct.pack("<I", masked(data))


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def scalar_event(step, tag, value, wall=1700000000.0):
    val = b"\x0a" + varint(len(tag)) + tag.encode() + b"\x15" + \
        struct.pack("<f", value)
    summ = b"\x0a" + varint(len(val)) + val
    return record(b"\x09" + struct.pack("<d", wall + step) + b"\x10" +
                  varint(step) + b"\x2a" + varint(len(summ)) + summ)


def events(tag, steps, scale=1.0):
    return b"".join(scalar_event(s, tag, s * scale) for s in steps)


