#!/usr/bin/env python3
"""Write the tiny hand-made .tflite seeds in tests/fuzz/seeds/ for the reader fuzzer.

Each seed is a small valid (or deliberately almost valid) TensorFlow Lite FlatBuffer that
reaches a different part of the reader: constants, quantization, signatures, options of
several operators (a vector of floats among them: BucketizeOptions' boundaries), a string
constant, an omitted optional input, intermediates, sparse tensors (SparsityParameters,
blocked and plain CSR, 8- and 16-bit index vectors), variable tensors (the recurrent
operators' states: rnn.tflite, svdf_int8.tflite), and the operators of signal.tflite,
extra_ops.tflite and segment_scatter.tflite with their option tables. The
files are committed; rerun this only to change them: python3 tests/fuzz/make_seeds.py
Five more seeds come from tools/gen_model, which writes them with memprof's own writer:
while_loop.tflite (`gen_model while 3`: a WHILE calling a cond and a body subgraph),
while_grow.tflite (`gen_model grow 2`: the loop variable grows each iteration) and
call_once.tflite (`gen_model callonce 3`: CALL_ONCE, VAR_HANDLE, READ_VARIABLE and
ASSIGN_VARIABLE over a resource variable); lstm_int8.tflite (`gen_model lstmq 3`: an int8
UNIDIRECTIONAL_SEQUENCE_LSTM with peephole, layer norm, projection and its 5 intermediates);
stablehlo.tflite (`gen_model stablehlo 3`: a STABLEHLO_COMPOSITE calling its decomposition
subgraph and a STABLEHLO_PAD, their options in builtin_options_2).
The regress_*.tflite files are fuzzer findings kept as regression inputs, not written here
(regress_softmax_long_row.tflite: an int8 SOFTMAX row whose exps overflowed TensorFlow
Lite's int32 sum).

The builder writes objects front to back: a table's reference fields are patched when
the child is appended after it (FlatBuffers uoffsets only need to point forward)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


class Builder:
    def __init__(self):
        self.b = bytearray()

    def pad(self, a, rem=0):
        while len(self.b) % a != rem:
            self.b.append(0)

    def table(self, fields):
        """fields: list of (id, fmt, value); fmt None = reference. Returns (pos, refs)."""
        maxid = max((f[0] for f in fields), default=-1)
        offs, cur = [], 4
        for _, fmt, _ in fields:
            size = struct.calcsize("<" + fmt) if fmt else 4
            cur = (cur + size - 1) // size * size
            offs.append(cur)
            cur += size
        vt = [4 + 2 * (maxid + 1), cur] + [0] * (maxid + 1)
        for (fid, _, _), off in zip(fields, offs):
            vt[2 + fid] = off
        self.pad(2)
        vpos = len(self.b)
        self.b += struct.pack("<%dH" % len(vt), *vt)
        self.pad(8)
        tpos = len(self.b)
        body = bytearray(cur)
        struct.pack_into("<i", body, 0, tpos - vpos)
        refs = {}
        for (fid, fmt, val), off in zip(fields, offs):
            if fmt:
                struct.pack_into("<" + fmt, body, off, val)
            else:
                refs[fid] = tpos + off
        self.b += body
        return tpos, refs

    def ref(self, field_pos, target):
        struct.pack_into("<I", self.b, field_pos, target - field_pos)

    def vec(self, fmt, values, align=4):
        self.pad(align, (align - 4) % align)
        pos = len(self.b)
        self.b += struct.pack("<I", len(values))
        self.b += struct.pack("<%d%s" % (len(values), fmt), *values)
        return pos

    def bytes_vec(self, data):
        self.pad(16, 12)  # data itself 16-aligned, as force_align asks
        pos = len(self.b)
        self.b += struct.pack("<I", len(data)) + data
        return pos

    def string(self, s):
        self.pad(4)
        pos = len(self.b)
        raw = s.encode()
        self.b += struct.pack("<I", len(raw)) + raw + b"\0"
        return pos

    def slots(self, n):
        self.pad(4)
        pos = len(self.b)
        self.b += struct.pack("<I", n) + bytes(4 * n)
        return [pos + 4 + 4 * i for i in range(n)], pos


def sparsity(fb, sp):
    """SparsityParameters: {"order": [...], "block_map": [...], "dims": [level]}, a level
    ("dense", size) or ("csr", bits, segments, indices); each index vector a table of one
    field (Int32Vector, Uint16Vector, Uint8Vector: union types 1, 2, 3, two ids each)."""
    fields = [(0, None, 0), (2, None, 0)]
    if sp.get("block_map"):
        fields.append((1, None, 0))
    st, sr = fb.table(fields)
    fb.ref(sr[0], fb.vec("i", sp["order"]))
    if sp.get("block_map"):
        fb.ref(sr[1], fb.vec("i", sp["block_map"]))
    slots, pos = fb.slots(len(sp["dims"]))
    fb.ref(sr[2], pos)
    kinds = {32: (1, "i"), 16: (2, "H"), 8: (3, "B")}
    for slot, level in zip(slots, sp["dims"]):
        if level[0] == "dense":
            dt, _ = fb.table([(1, "i", level[1])])
            fb.ref(slot, dt)
            continue
        utype, fmt = kinds[level[1]]
        dt, dr = fb.table([(0, "B", 1), (2, "B", utype), (3, None, 0), (4, "B", utype),
                           (5, None, 0)])
        fb.ref(slot, dt)
        for field, values in ((3, level[2]), (5, level[3])):
            vt, vr = fb.table([(0, None, 0)])
            fb.ref(dr[field], vt)
            fb.ref(vr[0], fb.vec(fmt, values))
    return st


def model(codes, tensors, ops, inputs, outputs, buffers, subgraphs=1):
    """codes: [(builtin, custom or None)]; tensors: dicts; ops: dicts; buffers: [bytes]."""
    fb = Builder()
    fb.b += b"\0\0\0\0TFL3"
    root, r = fb.table([(0, "I", 3), (1, None, 0), (2, None, 0), (3, None, 0), (4, None, 0)])
    struct.pack_into("<I", fb.b, 0, root)

    slots, pos = fb.slots(len(codes))
    fb.ref(r[1], pos)
    for slot, (code, custom) in zip(slots, codes):
        fields = [(0, "b", min(code, 127)), (2, "i", 1), (3, "i", code)]
        if custom is not None:
            fields.append((1, None, 0))
        t, cr = fb.table(fields)
        fb.ref(slot, t)
        if custom is not None:
            fb.ref(cr[1], fb.string(custom))

    sslots, pos = fb.slots(subgraphs)
    fb.ref(r[2], pos)
    for sslot in sslots:
        sg, sr = fb.table([(i, None, 0) for i in range(5)])
        fb.ref(sslot, sg)
        tslots, pos = fb.slots(len(tensors))
        fb.ref(sr[0], pos)
        for slot, t in zip(tslots, tensors):
            fields = [(0, None, 0), (1, "b", t["type"]), (2, "I", t.get("buffer", 0)), (3, None, 0)]
            if "scale" in t:
                fields.append((4, None, 0))
            if t.get("var"):
                fields.append((5, "B", 1))
            if "sparsity" in t:
                fields.append((6, None, 0))
            if "sig" in t:
                fields.append((7, None, 0))
            tp, tr = fb.table(fields)
            fb.ref(slot, tp)
            fb.ref(tr[0], fb.vec("i", t["shape"]))
            fb.ref(tr[3], fb.string(t["name"]))
            if "scale" in t:
                qp, qr = fb.table([(2, None, 0), (3, None, 0), (6, "i", t.get("qdim", 0))])
                fb.ref(tr[4], qp)
                fb.ref(qr[2], fb.vec("f", t["scale"]))
                fb.ref(qr[3], fb.vec("q", t["zp"], align=8))
            if "sparsity" in t:
                fb.ref(tr[6], sparsity(fb, t["sparsity"]))
            if "sig" in t:
                fb.ref(tr[7], fb.vec("i", t["sig"]))
        fb.ref(sr[1], fb.vec("i", inputs))
        fb.ref(sr[2], fb.vec("i", outputs))
        oslots, pos = fb.slots(len(ops))
        fb.ref(sr[3], pos)
        for slot, o in zip(oslots, ops):
            fields = [(0, "I", o.get("opcode", 0)), (1, None, 0), (2, None, 0)]
            if "opt_type" in o:
                fields += [(3, "B", o["opt_type"]), (4, None, 0)]
            if "inter" in o:
                fields.append((8, None, 0))
            if "custom" in o:
                fields.append((5, None, 0))
            op, orf = fb.table(fields)
            fb.ref(slot, op)
            fb.ref(orf[1], fb.vec("i", o["in"]))
            fb.ref(orf[2], fb.vec("i", o["out"]))
            if "opt_type" in o:
                ofields = [f for f in o.get("opt", [])]
                if "new_shape" in o:
                    ofields.append((0, None, 0))
                if "opt_vec" in o:  # (field id, struct format, values): a vector option
                    ofields.append((o["opt_vec"][0], None, 0))
                ot, otr = fb.table(ofields)
                fb.ref(orf[4], ot)
                if "new_shape" in o:
                    fb.ref(otr[0], fb.vec("i", o["new_shape"]))
                if "opt_vec" in o:
                    fb.ref(otr[o["opt_vec"][0]], fb.vec(o["opt_vec"][1], o["opt_vec"][2]))
            if "inter" in o:
                fb.ref(orf[8], fb.vec("i", o["inter"]))
            if "custom" in o:
                fb.ref(orf[5], fb.vec("B", list(o["custom"])))
        fb.ref(sr[4], fb.string("main"))
    fb.ref(r[3], fb.string("seed"))

    bslots, pos = fb.slots(len(buffers))
    fb.ref(r[4], pos)
    for slot, data in zip(bslots, buffers):
        if data:
            bt, br = fb.table([(0, None, 0)])
            fb.ref(slot, bt)
            fb.ref(br[0], fb.bytes_vec(data))
        else:
            bt, _ = fb.table([])
            fb.ref(slot, bt)
    return bytes(fb.b)


F32, I32, U8, I64, STR, BOOL, I16, C64, I8 = 0, 2, 3, 4, 5, 6, 7, 8, 9


def flex_map(entries):
    """A FlexBuffer map (custom options): entries [(key, "i" | "f" | "b", value)], in key
    order, every value inline in 4 bytes: keys, the keys vector, the map (keys offset, key
    width, size, values, one packed type byte each), then the root (1 byte), its type, 1."""
    b = bytearray()
    kpos = []
    for k, _, _ in entries:
        kpos.append(len(b))
        b += k.encode() + b"\0"
    while len(b) % 4:
        b.append(0)
    b += struct.pack("<I", len(entries))
    keys = len(b)
    for p in kpos:
        b += struct.pack("<I", len(b) - p)
    b += struct.pack("<III", len(b) - keys, 4, len(entries))
    mpos = len(b)
    types = {"i": 1, "f": 3, "b": 26}
    for _, kind, v in entries:
        b += struct.pack("<f", v) if kind == "f" else struct.pack("<i", int(v))
    for _, kind, _ in entries:
        b.append(types[kind] << 2 | 2)
    b.append(len(b) - mpos)
    b += bytes([9 << 2 | 2, 1])
    return bytes(b)


def f32s(*v):
    return struct.pack("<%df" % len(v), *v)


def seeds():
    out = {}
    # ADD with a constant operand and a dynamic batch signature.
    out["add_const.tflite"] = model(
        [(0, None)],
        [dict(name="x", type=F32, shape=[1, 2], sig=[-1, 2]),
         dict(name="c", type=F32, shape=[1, 2], buffer=1),
         dict(name="y", type=F32, shape=[1, 2], sig=[-1, 2])],
        [{"in": [0, 1], "out": [2], "opt_type": 11, "opt": [(0, "B", 1)]}],
        [0], [2], [b"", f32s(1.0, 2.0)])
    # CONV_2D with omitted bias, options, per-channel int8 weights.
    out["conv_q.tflite"] = model(
        [(3, None)],
        [dict(name="in", type=I8, shape=[1, 4, 4, 1], scale=[0.5], zp=[0]),
         dict(name="w", type=I8, shape=[2, 1, 1, 1], buffer=1, scale=[0.1, 0.2], zp=[0, 0], qdim=0),
         dict(name="out", type=I8, shape=[1, 2, 4, 2], scale=[0.25], zp=[-3])],
        [{"in": [0, 1, -1], "out": [2], "opt_type": 1,
          "opt": [(0, "B", 1), (1, "i", 1), (2, "i", 2), (3, "B", 3), (4, "i", 1), (5, "i", 1)]}],
        [0], [2], [b"", bytes([1, 2])])
    # RESHAPE with new_shape and a constant shape tensor, then SOFTMAX.
    out["reshape_softmax.tflite"] = model(
        [(22, None), (25, None)],
        [dict(name="x", type=F32, shape=[1, 2, 3]),
         dict(name="shape", type=I32, shape=[2], buffer=1),
         dict(name="r", type=F32, shape=[1, 6]),
         dict(name="y", type=F32, shape=[1, 6])],
        [{"opcode": 0, "in": [0, 1], "out": [2], "opt_type": 17, "new_shape": [1, 6]},
         {"opcode": 1, "in": [2], "out": [3], "opt_type": 9, "opt": [(0, "f", 1.0)]}],
        [0], [3], [b"", struct.pack("<2i", 1, 6)])
    # STRIDED_SLICE with masks; a string constant; a SHAPE to i64; an intermediate.
    strings = struct.pack("<3i", 1, 12, 14) + b"hi"  # count, offsets[2], bytes
    out["slice_shape_string.tflite"] = model(
        [(45, None), (77, None)],
        [dict(name="x", type=F32, shape=[4, 4]),
         dict(name="b", type=I32, shape=[2], buffer=1),
         dict(name="e", type=I32, shape=[2], buffer=2),
         dict(name="s", type=I32, shape=[2], buffer=3),
         dict(name="y", type=F32, shape=[2, 2]),
         dict(name="shape", type=I64, shape=[2]),
         dict(name="str", type=STR, shape=[1], buffer=4)],
        [{"opcode": 0, "in": [0, 1, 2, 3], "out": [4], "opt_type": 32,
          "opt": [(0, "i", 1), (1, "i", 2), (4, "i", 0)], "inter": [6]},
         {"opcode": 1, "in": [4], "out": [5], "opt_type": 55, "opt": [(0, "b", I64)]}],
        [0], [5], [b"", struct.pack("<2i", 0, 0), struct.pack("<2i", 2, 2),
                   struct.pack("<2i", 1, 1), strings])
    # REVERSE_SEQUENCE, BUCKETIZE (a float vector option), UNIQUE (i64 indices), WHERE and
    # SPARSE_TO_DENSE (validate_indices): the option tables of the indexing operators, and
    # outputs whose size is known only while running.
    out["indexing.tflite"] = model(
        [(112, None), (147, None), (103, None), (109, None), (68, None)],
        [dict(name="x", type=F32, shape=[2, 3]),
         dict(name="len", type=I32, shape=[2], buffer=1),
         dict(name="rs", type=F32, shape=[2, 3]),
         dict(name="bk", type=I32, shape=[2, 3]),
         dict(name="v", type=F32, shape=[4]),
         dict(name="uv", type=F32, shape=[4], sig=[-1]),
         dict(name="ui", type=I64, shape=[4]),
         dict(name="w", type=I64, shape=[6, 2], sig=[-1, 2]),
         dict(name="sd", type=F32, shape=[4]),
         dict(name="idx", type=I32, shape=[2], buffer=2),
         dict(name="dshape", type=I32, shape=[1], buffer=3),
         dict(name="one", type=F32, shape=[], buffer=4),
         dict(name="zero", type=F32, shape=[], buffer=5)],
        [{"opcode": 0, "in": [0, 1], "out": [2], "opt_type": 87, "opt": [(0, "i", 1)]},
         {"opcode": 1, "in": [2], "out": [3], "opt_type": 115,
          "opt_vec": (0, "f", [0.0, 1.5, 3.0])},
         {"opcode": 2, "in": [4], "out": [5, 6], "opt_type": 80, "opt": [(0, "b", I64)]},
         {"opcode": 3, "in": [0], "out": [7], "opt_type": 85},
         {"opcode": 4, "in": [9, 10, 11, 12], "out": [8], "opt_type": 50,
          "opt": [(0, "B", 1)]}],
        [0, 4], [3, 5, 6, 7, 8],
        [b"", struct.pack("<2i", 3, 1), struct.pack("<2i", 0, 2), struct.pack("<i", 4),
         f32s(1.0), f32s(0.0)])
    # The text and hashing operators: LSH_PROJECTION (DENSE), HASHTABLE_LOOKUP,
    # EMBEDDING_LOOKUP_SPARSE (MEAN), SKIP_GRAM (string outputs sized while running), and a
    # hash table (HASHTABLE, HASHTABLE_IMPORT, HASHTABLE_FIND, HASHTABLE_SIZE): their option
    # tables and the string buffers they read.
    def strs(*v):
        b = [x.encode() for x in v]
        offs, pos = [], 4 * (len(b) + 2)
        for x in b:
            offs.append(pos)
            pos += len(x)
        return struct.pack("<%di" % (len(b) + 2), len(b), *offs, pos) + b"".join(b)

    RES = 13
    out["text.tflite"] = model(
        [(15, None), (10, None), (33, None), (30, None), (136, None), (138, None), (137, None),
         (139, None)],
        [dict(name="hash", type=F32, shape=[2, 3], buffer=1),
         dict(name="x", type=I32, shape=[3]),
         dict(name="lsh", type=I32, shape=[6]),
         dict(name="look", type=I32, shape=[2]),
         dict(name="keys", type=I32, shape=[3], buffer=2),
         dict(name="vals", type=F32, shape=[3, 2], buffer=3),
         dict(name="lk", type=F32, shape=[2, 2]),
         dict(name="hits", type=U8, shape=[2]),
         dict(name="ids", type=I32, shape=[4], buffer=4),
         dict(name="indices", type=I32, shape=[4, 2], buffer=5),
         dict(name="dshape", type=I32, shape=[2], buffer=6),
         dict(name="weights", type=F32, shape=[4], buffer=7),
         dict(name="params", type=F32, shape=[4, 2], buffer=8),
         dict(name="emb", type=F32, shape=[3, 2]),
         dict(name="sentence", type=STR, shape=[1], buffer=9),
         dict(name="grams", type=STR, shape=[1]),
         dict(name="h", type=RES, shape=[1]),
         dict(name="tk", type=I64, shape=[3], buffer=10),
         dict(name="tv", type=STR, shape=[3], buffer=11),
         dict(name="q", type=I64, shape=[2], buffer=12),
         dict(name="def", type=STR, shape=[1], buffer=13),
         dict(name="found", type=STR, shape=[2]),
         dict(name="size", type=I64, shape=[1])],
        [{"opcode": 0, "in": [0, 1], "out": [2], "opt_type": 4, "opt": [(0, "b", 2)]},
         {"opcode": 1, "in": [3, 4, 5], "out": [6, 7]},
         {"opcode": 2, "in": [8, 9, 10, 11, 12], "out": [13], "opt_type": 20,
          "opt": [(0, "b", 1)]},
         {"opcode": 3, "in": [14], "out": [15], "opt_type": 18,
          "opt": [(0, "i", 2), (1, "i", 1)]},
         {"opcode": 4, "in": [], "out": [16], "opt_type": 107,
          "opt": [(0, "i", 1), (1, "b", I64), (2, "b", STR)]},
         {"opcode": 5, "in": [16, 17, 18], "out": []},
         {"opcode": 6, "in": [16, 19, 20], "out": [21]},
         {"opcode": 7, "in": [16], "out": [22]}],
        [1, 3], [2, 6, 7, 13, 15, 21, 22],
        [b"", f32s(0.5, -1.5, 2.25, 3.0, -0.75, 9.0), struct.pack("<3i", 1, 2, 3),
         f32s(1, 2, 3, 4, 5, 6), struct.pack("<4i", 1, 3, 0, 1),
         struct.pack("<8i", 0, 0, 0, 1, 1, 0, 2, 3), struct.pack("<2i", 3, 4),
         f32s(2.0, 0.5, 1.0, 3.0), f32s(1, 2, 3, 4, 5, 6, 7, 8), strs("to be or not"),
         struct.pack("<3q", 10, 20, 30), strs("a", "b", "c"), struct.pack("<2q", 20, 99),
         strs("?")])
    # The recurrent operators: RNN, UNIDIRECTIONAL_SEQUENCE_RNN (time major),
    # BIDIRECTIONAL_SEQUENCE_RNN (merged, aux input read by the backward cell), SVDF (rank 2)
    # and BIDIRECTIONAL_SEQUENCE_LSTM (no CIFG, peephole or projection), float32, their hidden
    # and cell states variable tensors kept across runs.
    w = f32s(0.5, -0.25, 0.125, 1.0)
    out["rnn.tflite"] = model(
        [(24, None), (35, None), (46, None), (27, None), (52, None)],
        [dict(name="x", type=F32, shape=[1, 2]),
         dict(name="w", type=F32, shape=[2, 2], buffer=1),
         dict(name="b", type=F32, shape=[2], buffer=2),
         dict(name="h", type=F32, shape=[1, 2], var=True),
         dict(name="y", type=F32, shape=[1, 2]),
         dict(name="seq", type=F32, shape=[3, 1, 2]),
         dict(name="h2", type=F32, shape=[1, 2], var=True),
         dict(name="ys", type=F32, shape=[3, 1, 2]),
         dict(name="hf", type=F32, shape=[1, 2], var=True),
         dict(name="hb", type=F32, shape=[1, 2], var=True),
         dict(name="yb", type=F32, shape=[3, 1, 4]),
         dict(name="wt", type=F32, shape=[4, 3], buffer=3),
         dict(name="sv", type=F32, shape=[1, 12], var=True),
         dict(name="ysv", type=F32, shape=[1, 2]),
         dict(name="af", type=F32, shape=[1, 2], var=True),
         dict(name="cf", type=F32, shape=[1, 2], var=True),
         dict(name="ab", type=F32, shape=[1, 2], var=True),
         dict(name="cb", type=F32, shape=[1, 2], var=True),
         dict(name="lf", type=F32, shape=[3, 1, 2]),
         dict(name="lb", type=F32, shape=[3, 1, 2]),
         dict(name="wf", type=F32, shape=[4, 2], buffer=4)],
        [{"opcode": 0, "in": [0, 1, 1, 2, 3], "out": [4], "opt_type": 7,
          "opt": [(0, "B", 4), (1, "b", 0)]},
         {"opcode": 1, "in": [5, 1, 1, 2, 6], "out": [7], "opt_type": 31,
          "opt": [(0, "b", 1), (1, "B", 1), (2, "b", 0)]},
         {"opcode": 2, "in": [5, 1, 1, 2, 8, 1, 1, 2, 9, 5, -1, -1], "out": [10],
          "opt_type": 70, "opt": [(0, "b", 1), (1, "B", 4), (2, "b", 1), (3, "b", 0)]},
         {"opcode": 3, "in": [0, 20, 11, 2, 12], "out": [13], "opt_type": 6,
          "opt": [(0, "i", 2), (1, "B", 1), (2, "b", 0)]},
         {"opcode": 4, "in": [5, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, 2, 2, 2, 2, -1, -1,
                              1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, 2, 2, 2, 2, -1, -1,
                              14, 15, 16, 17, -1, -1, -1, -1, -1, -1, -1, -1, -1],
          "out": [18, 19], "opt_type": 69,
          "opt": [(0, "B", 4), (1, "f", 10.0), (2, "f", 0.0), (3, "b", 0), (4, "b", 1),
                  (5, "b", 0)]}],
        [0, 5], [4, 7, 10, 13, 18, 19],
        [b"", w, f32s(0.1, -0.1), f32s(*[0.1 * i - 0.5 for i in range(12)]),
         f32s(1, 0, 0, 1, 0.5, 0.5, -1, 2)])
    # The integer SVDF (int8 input and output, int16 state and weights_time, int32 bias,
    # RELU) beside a hybrid RNN (int8 weights of one scale, asymmetric_quantize_inputs).
    out["svdf_int8.tflite"] = model(
        [(27, None), (24, None)],
        [dict(name="x", type=I8, shape=[2, 3], scale=[0.05], zp=[-3]),
         dict(name="wf", type=I8, shape=[4, 3], buffer=1, scale=[0.01], zp=[0]),
         dict(name="wt", type=I16, shape=[4, 2], buffer=2, scale=[0.001], zp=[0]),
         dict(name="b", type=I32, shape=[2], buffer=3, scale=[0.0005], zp=[0]),
         dict(name="s", type=I16, shape=[2, 8], scale=[0.0002], zp=[0], var=True),
         dict(name="y", type=I8, shape=[2, 2], scale=[0.02], zp=[-128]),
         dict(name="xf", type=F32, shape=[2, 3]),
         dict(name="rw", type=I8, shape=[2, 3], buffer=4, scale=[0.02], zp=[0]),
         dict(name="rr", type=I8, shape=[2, 2], buffer=5, scale=[0.03], zp=[0]),
         dict(name="rb", type=F32, shape=[2], buffer=6),
         dict(name="rh", type=F32, shape=[2, 2], var=True),
         dict(name="ry", type=F32, shape=[2, 2])],
        [{"opcode": 0, "in": [0, 1, 2, 3, 4], "out": [5], "opt_type": 6,
          "opt": [(0, "i", 2), (1, "B", 1), (2, "b", 0)]},
         {"opcode": 1, "in": [6, 7, 8, 9, 10], "out": [11], "opt_type": 7,
          "opt": [(0, "B", 3), (1, "b", 1)]}],
        [0, 6], [5, 11],
        [b"", bytes((i * 53 + 7) % 256 for i in range(12)),
         struct.pack("<8h", 300, -200, 1000, 50, -700, 20, 400, -30),
         struct.pack("<2i", 120, -40), bytes([10, 250, 33, 200, 5, 127]),
         bytes([129, 40, 7, 90]), f32s(0.5, -0.5)])
    # The signal, detection and random operators: RFFT2D with REAL, IMAG and COMPLEX_ABS of
    # its complex64 output, FAKE_QUANT, NON_MAX_SUPPRESSION_V4 / V5 (soft-NMS), BITCAST,
    # RANDOM_UNIFORM and RANDOM_STANDARD_NORMAL (seeds set) and MULTINOMIAL.
    out["signal.tflite"] = model(
        [(131, None), (134, None), (133, None), (135, None), (80, None), (120, None),
         (121, None), (159, None), (148, None), (146, None), (149, None)],
        [dict(name="x", type=F32, shape=[2, 4]),
         dict(name="fft_len", type=I32, shape=[2], buffer=1),
         dict(name="spec", type=C64, shape=[2, 3]),
         dict(name="re", type=F32, shape=[2, 3]),
         dict(name="im", type=F32, shape=[2, 3]),
         dict(name="abs", type=F32, shape=[2, 3]),
         dict(name="fq", type=F32, shape=[2, 4]),
         dict(name="boxes", type=F32, shape=[3, 4], buffer=2),
         dict(name="scores", type=F32, shape=[3]),
         dict(name="max_out", type=I32, shape=[], buffer=3),
         dict(name="iou", type=F32, shape=[], buffer=4),
         dict(name="thr", type=F32, shape=[], buffer=5),
         dict(name="sigma", type=F32, shape=[], buffer=6),
         dict(name="sel4", type=I32, shape=[2]),
         dict(name="valid4", type=I32, shape=[]),
         dict(name="sel5", type=I32, shape=[2]),
         dict(name="sc5", type=F32, shape=[2]),
         dict(name="valid5", type=I32, shape=[]),
         dict(name="bits", type=I32, shape=[2, 4]),
         dict(name="rshape", type=I32, shape=[2], buffer=7),
         dict(name="ru", type=F32, shape=[2, 3]),
         dict(name="rn", type=F32, shape=[2, 3]),
         dict(name="nsamp", type=I32, shape=[], buffer=3),
         dict(name="draws", type=I64, shape=[2, 2])],
        [{"opcode": 0, "in": [0, 1], "out": [2], "opt_type": 105},
         {"opcode": 1, "in": [2], "out": [3]},
         {"opcode": 2, "in": [2], "out": [4]},
         {"opcode": 3, "in": [2], "out": [5]},
         {"opcode": 4, "in": [0], "out": [6], "opt_type": 58,
          "opt": [(0, "f", -1.0), (1, "f", 2.0), (2, "i", 8), (3, "b", 0)]},
         {"opcode": 5, "in": [7, 8, 9, 10, 11], "out": [13, 14], "opt_type": 95},
         {"opcode": 6, "in": [7, 8, 9, 10, 11, 12], "out": [15, 16, 17], "opt_type": 96},
         {"opcode": 7, "in": [6], "out": [18]},
         {"opcode": 8, "in": [19], "out": [20], "opt_type": 114,
          "opt": [(0, "q", 7), (1, "q", 11)]},
         {"opcode": 9, "in": [19], "out": [21], "opt_type": 114,
          "opt": [(0, "q", 0), (1, "q", 3)]},
         {"opcode": 10, "in": [0, 22], "out": [23], "opt_type": 114,
          "opt": [(0, "q", 5), (1, "q", 0)]}],
        [0, 8], [3, 4, 5, 13, 14, 15, 16, 17, 18, 20, 21, 23],
        [b"", struct.pack("<2i", 2, 4), f32s(0, 0, 1, 1, 0, 0.1, 1, 1.1, 2, 2, 3, 3),
         struct.pack("<i", 2), f32s(0.5), f32s(-1.0), f32s(0.5), struct.pack("<2i", 2, 3)])
    # Elementwise, pooling, normalization and 3-D convolution operators: ADD_N, ATAN2, SIGN,
    # RELU_0_TO_1, BITWISE_XOR, RIGHT_SHIFT, REDUCE_ANY / REDUCE_ALL (keep_dims) on bool,
    # L2_POOL_2D, LOCAL_RESPONSE_NORMALIZATION, CONV_3D and CONV_3D_TRANSPOSE.
    out["extra_ops.tflite"] = model(
        [(106, None), (156, None), (158, None), (152, None), (160, None), (161, None),
         (91, None), (140, None), (12, None), (13, None), (132, None), (141, None)],
        [dict(name="a", type=F32, shape=[1, 4, 4, 1]),
         dict(name="sum", type=F32, shape=[1, 4, 4, 1]),
         dict(name="at", type=F32, shape=[1, 4, 4, 1]),
         dict(name="sg", type=F32, shape=[1, 4, 4, 1]),
         dict(name="r01", type=F32, shape=[1, 4, 4, 1]),
         dict(name="i", type=I32, shape=[2, 3]),
         dict(name="k", type=I32, shape=[3], buffer=1),
         dict(name="xor", type=I32, shape=[2, 3]),
         dict(name="shr", type=I32, shape=[2, 3]),
         dict(name="m", type=BOOL, shape=[2, 3]),
         dict(name="axis", type=I32, shape=[1], buffer=2),
         dict(name="any", type=BOOL, shape=[2, 1]),
         dict(name="all", type=BOOL, shape=[2]),
         dict(name="l2", type=F32, shape=[1, 2, 2, 1]),
         dict(name="c", type=F32, shape=[1, 2, 2, 3]),
         dict(name="lrn", type=F32, shape=[1, 2, 2, 3]),
         dict(name="v", type=F32, shape=[1, 2, 2, 2, 1]),
         dict(name="f3", type=F32, shape=[1, 1, 1, 1, 2], buffer=3),
         dict(name="bias3", type=F32, shape=[2], buffer=4),
         dict(name="c3", type=F32, shape=[1, 2, 2, 2, 2]),
         dict(name="oshape", type=I32, shape=[5], buffer=5),
         dict(name="ft", type=F32, shape=[1, 1, 1, 1, 2], buffer=3),
         dict(name="ct", type=F32, shape=[1, 2, 2, 2, 1])],
        [{"opcode": 0, "in": [0, 0, 0], "out": [1]},
         {"opcode": 1, "in": [1, 0], "out": [2]},
         {"opcode": 2, "in": [2], "out": [3]},
         {"opcode": 3, "in": [2], "out": [4]},
         {"opcode": 4, "in": [5, 6], "out": [7]},
         {"opcode": 5, "in": [7, 6], "out": [8]},
         {"opcode": 6, "in": [9, 10], "out": [11], "opt_type": 27, "opt": [(0, "b", 1)]},
         {"opcode": 7, "in": [9, 10], "out": [12], "opt_type": 27, "opt": [(0, "b", 0)]},
         {"opcode": 8, "in": [4], "out": [13], "opt_type": 5,
          "opt": [(0, "B", 1), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2), (5, "B", 1)]},
         {"opcode": 9, "in": [14], "out": [15], "opt_type": 13,
          "opt": [(0, "i", 1), (1, "f", 1.0), (2, "f", 0.5), (3, "f", 0.75)]},
         {"opcode": 10, "in": [16, 17, 18], "out": [19], "opt_type": 106,
          "opt": [(0, "B", 0), (1, "i", 1), (2, "i", 1), (3, "i", 1), (4, "B", 1),
                  (5, "i", 1), (6, "i", 1), (7, "i", 1)]},
         {"opcode": 11, "in": [20, 21, 19, -1], "out": [22], "opt_type": 106,
          "opt": [(0, "B", 1), (1, "i", 1), (2, "i", 1), (3, "i", 1), (4, "B", 0),
                  (5, "i", 1), (6, "i", 1), (7, "i", 1)]}],
        [0, 5, 9, 14, 16], [3, 8, 11, 12, 13, 15, 22],
        [b"", struct.pack("<3i", 1, 7, 40), struct.pack("<i", 1), f32s(1.0, -0.5),
         f32s(0.25, 0.0), struct.pack("<5i", 1, 2, 2, 2, 1)])
    # The segment and scatter operators: SEGMENT_SUM, UNSORTED_SEGMENT_SUM / PROD / MAX / MIN
    # (a negative id dropped), SCATTER_ND, DYNAMIC_UPDATE_SLICE, MATRIX_DIAG and
    # MATRIX_SET_DIAG.
    out["segment_scatter.tflite"] = model(
        [(125, None), (155, None), (153, None), (154, None), (157, None), (122, None),
         (151, None), (113, None), (115, None)],
        [dict(name="d", type=F32, shape=[4, 2]),
         dict(name="ids", type=I32, shape=[4], buffer=1),
         dict(name="seg", type=F32, shape=[3, 2]),
         dict(name="uids", type=I32, shape=[4], buffer=2),
         dict(name="nseg", type=I32, shape=[], buffer=3),
         dict(name="us", type=F32, shape=[3, 2]),
         dict(name="up", type=F32, shape=[3, 2]),
         dict(name="ux", type=F32, shape=[3, 2]),
         dict(name="un", type=F32, shape=[3, 2]),
         dict(name="sidx", type=I32, shape=[2, 1], buffer=4),
         dict(name="upd", type=F32, shape=[2, 2]),
         dict(name="sshape", type=I32, shape=[2], buffer=5),
         dict(name="sc", type=F32, shape=[4, 2]),
         dict(name="start", type=I32, shape=[2], buffer=6),
         dict(name="dus", type=F32, shape=[4, 2]),
         dict(name="diag", type=F32, shape=[2, 3]),
         dict(name="md", type=F32, shape=[2, 3, 3]),
         dict(name="msd", type=F32, shape=[2, 3, 3])],
        [{"opcode": 0, "in": [0, 1], "out": [2]},
         {"opcode": 1, "in": [0, 3, 4], "out": [5]},
         {"opcode": 2, "in": [0, 3, 4], "out": [6]},
         {"opcode": 3, "in": [0, 3, 4], "out": [7]},
         {"opcode": 4, "in": [0, 3, 4], "out": [8]},
         {"opcode": 5, "in": [9, 10, 11], "out": [12]},
         {"opcode": 6, "in": [0, 10, 13], "out": [14]},
         {"opcode": 7, "in": [15], "out": [16]},
         {"opcode": 8, "in": [16, 15], "out": [17]}],
        [0, 10, 15], [2, 5, 6, 7, 8, 12, 14, 17],
        [b"", struct.pack("<4i", 0, 0, 1, 2), struct.pack("<4i", 2, -1, 0, 2),
         struct.pack("<i", 3), struct.pack("<2i", 3, 1), struct.pack("<2i", 4, 2),
         struct.pack("<2i", 1, 0)])
    # Pool, CAST and MEAN on u8.
    out["pool_cast_mean.tflite"] = model(
        [(17, None), (53, None), (40, None)],
        [dict(name="x", type=U8, shape=[1, 4, 4, 1], scale=[1.0], zp=[128]),
         dict(name="p", type=U8, shape=[1, 2, 2, 1], scale=[1.0], zp=[128]),
         dict(name="f", type=F32, shape=[1, 2, 2, 1]),
         dict(name="axes", type=I32, shape=[2], buffer=1),
         dict(name="m", type=F32, shape=[1, 1, 1, 1])],
        [{"opcode": 0, "in": [0], "out": [1], "opt_type": 5,
          "opt": [(0, "B", 1), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2)]},
         {"opcode": 1, "in": [1], "out": [2], "opt_type": 37, "opt": [(0, "b", U8), (1, "b", F32)]},
         {"opcode": 2, "in": [2, 3], "out": [4], "opt_type": 27, "opt": [(0, "B", 1)]}],
        [0], [4], [b"", struct.pack("<2i", 1, 2)])
    # Quantized graphs (issue 15): uint8 FULLY_CONNECTED with a non-zero weight zero point and
    # an int32 bias, RELU6 fused.
    out["fc_u8.tflite"] = model(
        [(9, None)],
        [dict(name="x", type=U8, shape=[2, 3], scale=[0.05], zp=[120]),
         dict(name="w", type=U8, shape=[2, 3], buffer=1, scale=[0.02], zp=[130]),
         dict(name="b", type=I32, shape=[2], buffer=2, scale=[0.001], zp=[0]),
         dict(name="y", type=U8, shape=[2, 2], scale=[0.03], zp=[10])],
        [{"in": [0, 1, 2], "out": [3], "opt_type": 8, "opt": [(0, "B", 3)]}],
        [0], [3], [b"", bytes([1, 200, 130, 40, 90, 255]), struct.pack("<2i", -500, 700)])
    # int8 ADD of inputs with different scales, then int8 SOFTMAX (output 1/256, -128).
    out["add_softmax_i8.tflite"] = model(
        [(0, None), (25, None)],
        [dict(name="a", type=I8, shape=[1, 5], scale=[0.1], zp=[3]),
         dict(name="b", type=I8, shape=[1, 5], scale=[0.07], zp=[-20]),
         dict(name="s", type=I8, shape=[1, 5], scale=[0.15], zp=[0]),
         dict(name="y", type=I8, shape=[1, 5], scale=[1.0 / 256], zp=[-128])],
        [{"opcode": 0, "in": [0, 1], "out": [2], "opt_type": 11, "opt": [(0, "B", 1)]},
         {"opcode": 1, "in": [2], "out": [3], "opt_type": 9, "opt": [(0, "f", 1.0)]}],
        [0, 1], [3], [b""])
    # int8 DEPTHWISE_CONV_2D with per-channel weights along dimension 3 and multiplier 2, an
    # int8 AVERAGE_POOL_2D, then a CONCATENATION with an input of another scale.
    out["dw_pool_concat_i8.tflite"] = model(
        [(4, None), (1, None), (2, None)],
        [dict(name="x", type=I8, shape=[1, 4, 4, 2], scale=[0.5], zp=[-1]),
         dict(name="w", type=I8, shape=[1, 3, 3, 4], buffer=1, scale=[0.1, 0.2, 0.05, 0.3],
              zp=[0, 0, 0, 0], qdim=3),
         dict(name="d", type=I8, shape=[1, 4, 4, 4], scale=[0.4], zp=[5]),
         dict(name="p", type=I8, shape=[1, 2, 2, 4], scale=[0.4], zp=[5]),
         dict(name="z", type=I8, shape=[1, 2, 2, 3], scale=[0.25], zp=[-7]),
         dict(name="y", type=I8, shape=[1, 2, 2, 7], scale=[0.3], zp=[2])],
        [{"opcode": 0, "in": [0, 1, -1], "out": [2], "opt_type": 2,
          "opt": [(0, "B", 0), (1, "i", 1), (2, "i", 1), (3, "i", 2), (4, "B", 1)]},
         {"opcode": 1, "in": [2], "out": [3], "opt_type": 5,
          "opt": [(0, "B", 1), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2)]},
         {"opcode": 2, "in": [3, 4], "out": [5], "opt_type": 10, "opt": [(0, "i", 3)]}],
        [0, 4], [5], [b"", bytes((i * 37 + 11) % 256 for i in range(36))])
    # QUANTIZE float32 -> uint8, then DEQUANTIZE back.
    out["quantize_dequantize.tflite"] = model(
        [(114, None), (6, None)],
        [dict(name="x", type=F32, shape=[1, 6]),
         dict(name="q", type=U8, shape=[1, 6], scale=[0.02], zp=[128]),
         dict(name="y", type=F32, shape=[1, 6])],
        [{"opcode": 0, "in": [0], "out": [1]}, {"opcode": 1, "in": [1], "out": [2]}],
        [0], [2], [b""])
    # 16x8 quantization (int16 activations of zero point 0, int8 weights): QUANTIZE float32 ->
    # int16, CONV_2D (per-channel weights, int64 bias), DEPTHWISE_CONV_2D (int64 bias), ADD of
    # the two with pot_scale_int16 false (the general path), FULLY_CONNECTED, DEQUANTIZE.
    out["int16x8.tflite"] = model(
        [(114, None), (3, None), (4, None), (0, None), (9, None), (6, None)],
        [dict(name="x", type=F32, shape=[1, 3, 3, 2]),
         dict(name="q", type=I16, shape=[1, 3, 3, 2], scale=[1.0 / 4096], zp=[0]),
         dict(name="wc", type=I8, shape=[2, 3, 3, 2], buffer=1, scale=[0.01, 0.02], zp=[0, 0]),
         dict(name="bc", type=I64, shape=[2], buffer=2),
         dict(name="c", type=I16, shape=[1, 3, 3, 2], scale=[1.0 / 512], zp=[0]),
         dict(name="wd", type=I8, shape=[1, 3, 3, 2], buffer=3, scale=[0.005, 0.01], zp=[0, 0],
              qdim=3),
         dict(name="bd", type=I64, shape=[2], buffer=4),
         dict(name="d", type=I16, shape=[1, 3, 3, 2], scale=[1.0 / 512], zp=[0]),
         dict(name="a", type=I16, shape=[1, 3, 3, 2], scale=[1.0 / 512], zp=[0]),
         dict(name="wf", type=I8, shape=[3, 18], buffer=5, scale=[0.004], zp=[0]),
         dict(name="bf", type=I64, shape=[3], buffer=6),
         dict(name="yq", type=I16, shape=[1, 3], scale=[1.0 / 256], zp=[0]),
         dict(name="y", type=F32, shape=[1, 3])],
        [{"opcode": 0, "in": [0], "out": [1]},
         {"opcode": 1, "in": [1, 2, 3], "out": [4], "opt_type": 1,
          "opt": [(0, "B", 0), (1, "i", 1), (2, "i", 1)]},
         {"opcode": 2, "in": [4, 5, 6], "out": [7], "opt_type": 2,
          "opt": [(0, "B", 0), (1, "i", 1), (2, "i", 1), (3, "i", 1)]},
         {"opcode": 3, "in": [4, 7], "out": [8], "opt_type": 11, "opt": [(1, "B", 0)]},
         {"opcode": 4, "in": [8, 9, 10], "out": [11], "opt_type": 8},
         {"opcode": 5, "in": [11], "out": [12]}],
        [0], [12],
        [b"", bytes((i * 53 + 7) % 256 for i in range(36)), struct.pack("<2q", 1500, -2500),
         bytes((i * 29 + 3) % 256 for i in range(18)), struct.pack("<2q", -700, 300),
         bytes((i * 61 + 5) % 256 for i in range(54)), struct.pack("<3q", 40000, -9000, 0)])
    # 16x8 activations and pooling: QUANTIZE -> MAX_POOL_2D and AVERAGE_POOL_2D, their MUL and
    # (power-of-two) SUB, LOGISTIC and TANH (two input scales), CONCATENATION, RESHAPE,
    # SOFTMAX (output 1/32768), DEQUANTIZE.
    out["int16x8_act.tflite"] = model(
        [(114, None), (17, None), (1, None), (18, None), (41, None), (14, None), (28, None),
         (2, None), (22, None), (25, None), (6, None)],
        [dict(name="x", type=F32, shape=[1, 4, 4, 2]),
         dict(name="q", type=I16, shape=[1, 4, 4, 2], scale=[2.0 ** -12], zp=[0]),
         dict(name="m", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -12], zp=[0]),
         dict(name="a", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -12], zp=[0]),
         dict(name="p", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -10], zp=[0]),
         dict(name="d", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -12], zp=[0]),
         dict(name="l", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -15], zp=[0]),
         dict(name="t", type=I16, shape=[1, 2, 2, 2], scale=[2.0 ** -15], zp=[0]),
         dict(name="c", type=I16, shape=[1, 2, 2, 4], scale=[2.0 ** -15], zp=[0]),
         dict(name="shape", type=I32, shape=[2], buffer=1),
         dict(name="r", type=I16, shape=[4, 4], scale=[2.0 ** -15], zp=[0]),
         dict(name="s", type=I16, shape=[4, 4], scale=[2.0 ** -15], zp=[0]),
         dict(name="y", type=F32, shape=[4, 4])],
        [{"opcode": 0, "in": [0], "out": [1]},
         {"opcode": 1, "in": [1], "out": [2], "opt_type": 5,
          "opt": [(0, "B", 1), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2)]},
         {"opcode": 2, "in": [1], "out": [3], "opt_type": 5,
          "opt": [(0, "B", 1), (1, "i", 2), (2, "i", 2), (3, "i", 2), (4, "i", 2)]},
         {"opcode": 3, "in": [2, 3], "out": [4], "opt_type": 21},
         {"opcode": 4, "in": [2, 3], "out": [5], "opt_type": 28},
         {"opcode": 5, "in": [5], "out": [6]},
         {"opcode": 6, "in": [4], "out": [7]},
         {"opcode": 7, "in": [6, 7], "out": [8], "opt_type": 10, "opt": [(0, "i", 3)]},
         {"opcode": 8, "in": [8, 9], "out": [10]},
         {"opcode": 9, "in": [10], "out": [11], "opt_type": 9, "opt": [(0, "f", 1.0)]},
         {"opcode": 10, "in": [11], "out": [12]}],
        [0], [12], [b"", struct.pack("<2i", 4, 4)])
    # TFLite_Detection_PostProcess (issue 16): the custom operator memprof runs, its
    # FlexBuffer options; 4 anchors, 2 classes and a background column, fast NMS.
    det_opts = flex_map([
        ("detections_per_class", "i", 100), ("h_scale", "f", 5.0),
        ("max_classes_per_detection", "i", 1), ("max_detections", "i", 2),
        ("nms_iou_threshold", "f", 0.5), ("nms_score_threshold", "f", 0.25),
        ("num_classes", "i", 2), ("use_regular_nms", "b", 0), ("w_scale", "f", 5.0),
        ("x_scale", "f", 10.0), ("y_scale", "f", 10.0)])
    out["detection.tflite"] = model(
        [(32, "TFLite_Detection_PostProcess")],
        [dict(name="enc", type=F32, shape=[1, 4, 4]),
         dict(name="scores", type=F32, shape=[1, 4, 3]),
         dict(name="anchors", type=F32, shape=[4, 4], buffer=1),
         dict(name="boxes", type=F32, shape=[1, 2, 4]),
         dict(name="classes", type=F32, shape=[1, 2]),
         dict(name="det_scores", type=F32, shape=[1, 2]),
         dict(name="num", type=F32, shape=[1])],
        [{"in": [0, 1, 2], "out": [3, 4, 5, 6], "custom": det_opts}],
        [0, 1], [3, 4, 5, 6],
        [b"", f32s(0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1, 2.5, 2.5, 1, 1, 2.5, 3, 1, 1)])
    # MediaPipe's segmentation operators (custom options: TensorFlow Lite's C structs, int32
    # little-endian): MaxPoolingWithArgmax2D and MaxUnpooling2D (TfLitePoolParams: VALID,
    # stride 2x2, filter 2x2, no activation, computed padding) and Convolution2DTransposeBias
    # (TfLiteTransposeConvParams: SAME, stride 2x2).
    mp_pool = struct.pack("<10i", 2, 2, 2, 2, 2, 0, 0, 0, 0, 0)
    out["mediapipe.tflite"] = model(
        [(32, "MaxPoolingWithArgmax2D"), (32, "MaxUnpooling2D"),
         (32, "Convolution2DTransposeBias")],
        [dict(name="x", type=F32, shape=[1, 4, 4, 2]),
         dict(name="pooled", type=F32, shape=[1, 2, 2, 2]),
         dict(name="argmax", type=F32, shape=[1, 2, 2, 2]),
         dict(name="unpooled", type=F32, shape=[1, 4, 4, 2]),
         dict(name="w", type=F32, shape=[1, 2, 2, 2], buffer=1),
         dict(name="b", type=F32, shape=[1], buffer=2),
         dict(name="segment", type=F32, shape=[1, 8, 8, 1])],
        [{"opcode": 0, "in": [0], "out": [1, 2], "custom": mp_pool},
         {"opcode": 1, "in": [1, 2], "out": [3], "custom": mp_pool},
         {"opcode": 2, "in": [3, 4, 5], "out": [6], "custom": struct.pack("<3i", 1, 2, 2)}],
        [0], [2, 6], [b"", f32s(0.5, -1, 0.25, 2, -0.5, 1, 1.5, -2), f32s(0.1)])
    # Sparse weights: a [4,8] matrix in 1x4 blocks (block_map [1], 8-bit index vectors)
    # expanded by DENSIFY for a FULLY_CONNECTED, and a plain CSR [4,4] matrix (16-bit vectors)
    # that a second FULLY_CONNECTED uses directly.
    blocked = {"order": [0, 1, 2], "block_map": [1],
               "dims": [("dense", 4), ("csr", 8, [0, 1, 2, 2, 4], [1, 0, 0, 1]), ("dense", 4)]}
    csr = {"order": [0, 1], "dims": [("dense", 4), ("csr", 16, [0, 1, 3, 3, 4], [2, 0, 3, 1])]}
    sparse_tensors = [
        dict(name="x", type=F32, shape=[1, 8]),
        dict(name="w_sparse", type=F32, shape=[4, 8], buffer=1, sparsity=blocked),
        dict(name="w", type=F32, shape=[4, 8]),
        dict(name="h", type=F32, shape=[1, 4]),
        dict(name="v", type=F32, shape=[4, 4], buffer=2, sparsity=csr),
        dict(name="y", type=F32, shape=[1, 4])]
    sparse_ops = [{"opcode": 0, "in": [1], "out": [2]},
                  {"opcode": 1, "in": [0, 2, -1], "out": [3], "opt_type": 8},
                  {"opcode": 1, "in": [3, 4, -1], "out": [5], "opt_type": 8}]
    sparse_bufs = [b"", f32s(1, 2, 3, 4, 0.5, 0, 0, -1, 2, 2, 2, 2, -3, 0, 0.25, 0),
                   f32s(1, -1, 2, 0.5)]
    out["densify_fc.tflite"] = model([(124, None), (9, None)], sparse_tensors, sparse_ops,
                                     [0], [5], sparse_bufs)
    # Refused on purpose: the same with a block column index out of range (2 of 2).
    bad = dict(blocked, dims=[("dense", 4), ("csr", 8, [0, 1, 2, 2, 4], [1, 0, 0, 2]),
                              ("dense", 4)])
    sparse_tensors[1] = dict(sparse_tensors[1], sparsity=bad)
    out["sparse_bad_index.tflite"] = model([(124, None), (9, None)], sparse_tensors, sparse_ops,
                                           [0], [5], sparse_bufs)
    # TensorFlow Lite's own custom operators (FlexBuffer options): AudioSpectrogram (window 16,
    # stride 8: 7 frames of 9 bins) -> Mfcc (sample rate 8000 a constant, 20..4000 Hz, 4
    # channels, 3 coefficients), and NumericVerify of an int8 tensor against its float one.
    out["audio.tflite"] = model(
        [(32, "AudioSpectrogram"), (32, "Mfcc"), (32, "NumericVerify")],
        [dict(name="x", type=F32, shape=[64, 1]),
         dict(name="spec", type=F32, shape=[1, 7, 9]),
         dict(name="rate", type=I32, shape=[1], buffer=1),
         dict(name="mfcc", type=F32, shape=[1, 7, 3]),
         dict(name="q", type=I8, shape=[4], scale=[0.5], zp=[-1]),
         dict(name="r", type=F32, shape=[4]),
         dict(name="diff", type=F32, shape=[4])],
        [{"opcode": 0, "in": [0], "out": [1], "custom": flex_map([
            ("magnitude_squared", "b", 1), ("stride", "i", 8), ("window_size", "i", 16)])},
         {"opcode": 1, "in": [1, 2], "out": [3], "custom": flex_map([
             ("dct_coefficient_count", "i", 3), ("filterbank_channel_count", "i", 4),
             ("lower_frequency_limit", "f", 20.0), ("upper_frequency_limit", "f", 4000.0)])},
         {"opcode": 2, "in": [4, 5], "out": [6], "custom": flex_map([
             ("log_if_failed", "b", 0), ("tolerance", "f", 5.0)])}],
        [0, 4, 5], [3, 6], [b"", struct.pack("<i", 8000)])
    # Refused on purpose: a custom operator, and two subgraphs.
    out["custom_op.tflite"] = model(
        [(32, "fake-op")],
        [dict(name="x", type=F32, shape=[1]), dict(name="y", type=F32, shape=[1])],
        [{"in": [0], "out": [1]}], [0], [1], [b""])
    # DEPTHWISE_CONV_2D with windows XNNPACK has no microkernel for (engine/kernels/dwconv.c):
    # float32 7x1 SAME with a bias and RELU6, and int8 per-channel 5x1 VALID, stride 2.
    out["dwconv_c.tflite"] = model(
        [(4, None)],
        [dict(name="x", type=F32, shape=[1, 9, 1, 3]),
         dict(name="w", type=F32, shape=[1, 7, 1, 3], buffer=1),
         dict(name="b", type=F32, shape=[3], buffer=2),
         dict(name="y", type=F32, shape=[1, 9, 1, 3]),
         dict(name="xq", type=I8, shape=[1, 9, 1, 4], scale=[0.5], zp=[-1]),
         dict(name="wq", type=I8, shape=[1, 5, 1, 4], buffer=3, scale=[0.1, 0.2, 0.05, 0.3],
              zp=[0, 0, 0, 0], qdim=3),
         dict(name="bq", type=I32, shape=[4], buffer=4, scale=[0.05, 0.1, 0.025, 0.15],
              zp=[0, 0, 0, 0]),
         dict(name="yq", type=I8, shape=[1, 3, 1, 4], scale=[0.4], zp=[5])],
        [{"opcode": 0, "in": [0, 1, 2], "out": [3], "opt_type": 2,
          "opt": [(0, "B", 0), (1, "i", 1), (2, "i", 1), (3, "i", 1), (4, "B", 3)]},
         {"opcode": 0, "in": [4, 5, 6], "out": [7], "opt_type": 2,
          "opt": [(0, "B", 1), (1, "i", 1), (2, "i", 2), (3, "i", 1)]}],
        [0, 4], [3, 7],
        [b"", f32s(*[((i * 7) % 11 - 5) / 8.0 for i in range(21)]), f32s(0.5, -0.25, 1.0),
         bytes((i * 53 + 7) % 256 for i in range(20)), struct.pack("<4i", 100, -50, 7, 0)])
    out["two_subgraphs.tflite"] = model(
        [(0, None)],
        [dict(name="x", type=F32, shape=[1]), dict(name="y", type=F32, shape=[1])],
        [{"in": [0, 0], "out": [1], "opt_type": 11}], [0], [1], [b""], subgraphs=2)
    return out


def main():
    d = os.path.join(HERE, "seeds")
    os.makedirs(d, exist_ok=True)
    for name, data in seeds().items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (name, len(data)))


if __name__ == "__main__":
    main()
