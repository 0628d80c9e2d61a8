"""tfevents_py.py - a tiny event-file writer for the integration tests,
independent of libtfboard (pure-Python CRC-32C, protobuf wire format and
TFRecord framing), so tests can write files as other tools write them:
PyTorch-style simple_value scalars, HistogramProto, any wall time."""

import struct


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC_TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint((field << 3) | wire)


def ld(field, payload):
    """A length-delimited field."""
    return key(field, 2) + varint(len(payload)) + payload


def f_double(field, v):
    return key(field, 1) + struct.pack("<d", v)


def f_float(field, v):
    return key(field, 5) + struct.pack("<f", v)


def event(wall, step=None, file_version=None, summary=None):
    """Event{wall_time, step, file_version | summary}."""
    b = f_double(1, wall)
    if step is not None:
        b += key(2, 0) + varint(step)
    if file_version is not None:
        b += ld(3, file_version.encode())
    if summary is not None:
        b += ld(5, summary)
    return b


def scalar_value(tag, v):
    """One Summary.value with simple_value (no metadata, as PyTorch)."""
    return ld(1, ld(1, tag.encode()) + f_float(2, v))


def scalars_summary(pairs):
    """A Summary holding one simple_value per (tag, value)."""
    return b"".join(scalar_value(t, v) for t, v in pairs)


def histo_value(tag, mn, mx, num, sm, limits, counts):
    h = (f_double(1, mn) + f_double(2, mx) + f_double(3, num) +
         f_double(4, sm) + f_double(5, 0.0) +
         ld(6, b"".join(struct.pack("<d", x) for x in limits)) +
         ld(7, b"".join(struct.pack("<d", x) for x in counts)))
    return ld(1, ld(1, tag.encode()) + ld(5, h))


def record(payload):
    """TFRecord framing: length, masked length CRC, payload, masked CRC."""
    n = struct.pack("<Q", len(payload))
    return (n + struct.pack("<I", masked_crc(n)) + payload +
            struct.pack("<I", masked_crc(payload)))
