/* .tflite reader: maps a TensorFlow Lite model, verifies it, and builds an mp_model.
 *
 * The file is never trusted. Every structure is reached through the bounds-checked
 * FlatBuffers helpers in flatbuf.h, and every index the rest of the engine will follow
 * (tensor, operator code, buffer) is range-checked here, so code above the reader can
 * index without checking again. Constant tensor data is not copied: tensors point into
 * the read-only file mapping (load_file) or into one owned anonymous mapping holding a
 * copy (load_memory).
 * The one exception is data not aligned for its element type (an 8-byte type on a 4-byte
 * boundary, which converters do produce): it is copied into aligned model memory so
 * kernels can read it through typed pointers, and left out of const_bytes.
 *
 * Every subgraph is read and verified alike (subgraph 0 into the model's own fields, the
 * others into views, model.h); then the calls between them (WHILE, IF, CALL_ONCE) are
 * checked: indices in range, input and output counts and dtypes that fit, no recursion,
 * bounded nesting.
 *
 * Faults are reported as one line naming the file and the fault (and the subgraph, when not
 * the first); the status tells what kind: MP_ERR_IO (cannot open or map), MP_ERR_FORMAT
 * (malformed, truncated, empty, a bad subgraph call), MP_ERR_UNSUPPORTED (a valid model using something memprof does not
 * read: custom operators other than those of ops.c's custom table, unknown operators, sparse
 * tensors of dtypes without a fixed size, rank above MP_MAX_RANK...).
 * A sparse constant (Tensor.sparsity) is verified and expanded to its dense form in model
 * memory at load (tflite_sparsity.c), counted in heap_bytes and dense_bytes; an int4 constant
 * is unpacked to int8 model memory (tflite_tensors.c), counted in heap_bytes and unpacked_bytes.
 *
 * All bookkeeping (tensor and operator tables, names, index arrays) lives in a small
 * arena owned by the model, so every error path just frees the whole model.
 *
 * Tensors and constant data are read in tflite_tensors.c, operator options in
 * tflite_options.c; tflite_reader_internal.h is what the three share. */
#include "engine/model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine_limits.h"
#include "engine/model/flatbuf.h"
#include "engine/model/tflite_reader_internal.h"

/* Schema version this reader understands (the "3" in the TFL3 identifier). */
#define TFL_SCHEMA_VERSION 3

/* Whether input `idx` of an operator may be -1 (omitted optional input). These are the
 * operators whose TensorFlow Lite kernels document optional inputs; for the recurrent
 * families almost every input after the first is optional, so the kernel decides. */
static bool optional_input(int code, uint32_t idx)
{
    switch (code) {
    case MP_OP_CONV_2D:
    case MP_OP_DEPTHWISE_CONV_2D:
    case MP_OP_FULLY_CONNECTED:
    case MP_OP_CONV_3D:
    case MP_OP_LSH_PROJECTION:
        return idx == 2; /* bias (LSH_PROJECTION: weight) */
    case MP_OP_TRANSPOSE_CONV:
    case MP_OP_CONV_3D_TRANSPOSE:
    case MP_OP_SVDF:
        return idx == 3; /* bias */
    case MP_OP_LSTM:
    case MP_OP_UNIDIRECTIONAL_SEQUENCE_LSTM:
    case MP_OP_BIDIRECTIONAL_SEQUENCE_LSTM:
    case MP_OP_BIDIRECTIONAL_SEQUENCE_RNN:
        return idx >= 1;
    default:
        return false;
    }
}

/* ---- model-owned memory -------------------------------------------------------------- */

/* FlatBuffers may share one sub-object between many parents: a file of n bytes can list
 * n/4 operators that all point at the same n/4-entry input vector, or n/4 tensors sharing
 * one long name. Copying those naively needs memory quadratic in the file size, so the
 * bookkeeping of a model is capped at a generous multiple of its size; real models use a
 * small fraction of this. The multiple, 32, leaves room for the smallest operators (some
 * 24 bytes of file each when they share their tables) whose mp_op_info is over 400 bytes. */
static size_t budget_for(size_t file_bytes)
{
    size_t b;
    if (__builtin_mul_overflow(file_bytes, (size_t)32, &b) ||
        __builtin_add_overflow(b, (size_t)16 << 20, &b))
        return SIZE_MAX;
    return b;
}

/* Allocate n bytes (16-aligned; n == 0 gives a valid pointer). NULL when out of memory or
 * over budget. */
void *mp_tfl_alloc(rd_impl *im, size_t n)
{
    size_t need;
    if (__builtin_add_overflow(n, RD_ALIGN - 1, &need))
        return NULL;
    need &= ~(RD_ALIGN - 1);
    if (need == 0)
        need = RD_ALIGN;
    if (need > im->budget - im->used) {
        im->over_budget = true;
        return NULL;
    }
    im->used += need;
    rd_chunk *c = im->chunks;
    if (c && c->cap - c->used >= need) {
        void *p = (unsigned char *)c->data + c->used;
        c->used += need;
        return p;
    }
    /* Big requests get a chunk of their own so the current chunk's tail is not wasted. */
    size_t cap = need > RD_CHUNK_BYTES / 4 ? need : RD_CHUNK_BYTES;
    size_t total;
    if (__builtin_add_overflow(sizeof(rd_chunk), cap, &total))
        return NULL;
    rd_chunk *nc = malloc(total);
    if (!nc)
        return NULL;
    im->heap += total;
    nc->cap = cap;
    nc->used = need;
    if (c && cap != RD_CHUNK_BYTES) {
        nc->next = c->next; /* keep the partly filled chunk first */
        c->next = nc;
    } else {
        nc->next = c;
        im->chunks = nc;
    }
    return nc->data;
}

void *mp_tfl_array(rd_impl *im, size_t n, size_t elem)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, elem, &bytes))
        return NULL;
    void *p = mp_tfl_alloc(im, bytes);
    if (p)
        memset(p, 0, bytes);
    return p;
}

void *mp_tfl_data(rd_impl *im, size_t bytes)
{
    size_t need;
    if (__builtin_add_overflow(bytes, (size_t)MP_MODEL_TAIL_SLACK + RD_ALIGN, &need))
        return NULL;
    im->budget = im->budget > SIZE_MAX - need ? SIZE_MAX : im->budget + need;
    return mp_tfl_array(im, bytes + MP_MODEL_TAIL_SLACK, 1);
}

/* Copy a string from the file. Control characters become '?': names end up in one-line
 * error messages and terminal tables, which a crafted file must not be able to break. */
char *mp_tfl_strdup(rd_impl *im, const char *s, size_t len)
{
    char *p = mp_tfl_alloc(im, len + 1);
    if (p) {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)s[i];
            p[i] = (c < 0x20 && c != 0) || c == 0x7f ? '?' : (char)c;
        }
        p[len] = '\0';
    }
    return p;
}

void mp_model_free(mp_model *m)
{
    if (!m)
        return;
    rd_impl *im = m->impl;
    if (im) {
        if (im->map)
            munmap(im->map, im->map_len);
        rd_chunk *c = im->chunks;
        while (c) {
            rd_chunk *next = c->next;
            free(c);
            c = next;
        }
        free(im);
    }
    free(m);
}

/* ---- messages ------------------------------------------------------------------------ */

mp_status mp_tfl_fail(rd *r, mp_status st, const char *fmt, ...)
{
    char msg[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->sg > 0)
        return mp_fail(r->err, st, "%s: subgraph %d: %s", r->path, (int)r->sg, msg);
    return mp_fail(r->err, st, "%s: %s", r->path, msg);
}

/* A fault found by the FlatBuffers helpers. */
mp_status mp_tfl_fb_fault(rd *r)
{
    return mp_tfl_fail(r, MP_ERR_FORMAT, "%s", r->fb.msg[0] ? r->fb.msg : "malformed model");
}

mp_status mp_tfl_nomem(rd *r)
{
    if (r->im->over_budget)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                       "malformed: the model's tables would need over %zu MB of bookkeeping for a %zu-byte file "
                       "(sub-objects shared implausibly often)",
                       r->im->budget >> 20, r->fb.size);
    return mp_tfl_fail(r, MP_ERR_NOMEM, "out of memory while reading the model");
}

/* A name from the file, made safe for a one-line message: non-printable bytes become '?'
 * and long names are cut. */
const char *mp_tfl_safe(const char *s, char *buf, size_t cap)
{
    size_t i = 0, max = cap - 1;
    if (!s)
        s = "";
    for (; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        buf[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    buf[i] = '\0';
    if (s[i] && max >= 3)
        memcpy(buf + max - 3, "...", 3);
    return buf;
}

const char *mp_tfl_op_label(int code)
{
    const char *n = mp_op_name(code);
    return n ? n : "?";
}

/* ---- operators ----------------------------------------------------------------------- */

/* Copy a verified index vector into dst, checking every entry against the tensor count. */
static mp_status read_indices(rd *r, int32_t i, int code, const mp_fb_vec *v, const char *what,
                              bool inputs, int32_t n_tensors, int32_t *dst)
{
    for (uint32_t k = 0; k < v->n; k++) {
        int32_t t = mp_fb_vec_i32(&r->fb, v, k);
        if (t == -1 && inputs && optional_input(code, k)) {
            dst[k] = -1; /* an omitted optional input */
            continue;
        }
        if (t == -1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) %s %u is -1 (omitted), which is not allowed there",
                           i, mp_tfl_op_label(code), what, k);
        if (t < 0 || t >= n_tensors)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) %s %u is tensor %d, out of range (%d tensors)",
                           i, mp_tfl_op_label(code), what, k, t, n_tensors);
        dst[k] = t;
    }
    return MP_OK;
}

/* TensorFlow Lite's quantization specification: the int8 weights (input 1) of CONV_2D,
 * DEPTHWISE_CONV_2D and FULLY_CONNECTED are symmetric, zero point 0 per tensor or per channel
 * (the tensor alone cannot tell: elsewhere int8 constants may be asymmetric). Checked on
 * constant weights; tensors are read before operators. */
static mp_status check_symmetric_weights(rd *r, int32_t i, int code, const mp_op_info *op)
{
    if ((code != MP_OP_CONV_2D && code != MP_OP_DEPTHWISE_CONV_2D &&
         code != MP_OP_FULLY_CONNECTED) || op->n_inputs < 2 || op->inputs[1] < 0)
        return MP_OK;
    int32_t w = op->inputs[1];
    const mp_tensor_info *t = &r->tensors[w];
    if (t->dtype != MP_DT_INT8 || !t->data || !t->quant.zero_point)
        return MP_OK;
    for (int32_t k = 0; k < t->quant.count; k++) {
        if (t->quant.zero_point[k] == 0)
            continue;
        char nm[80], where[40] = "";
        if (t->quant.count > 1)
            snprintf(where, sizeof where, " (channel %d)", k);
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                           "tensor %d '%s', the weights of operator %d (%s), has zero point %lld%s; int8 weights are symmetric (zero point 0)",
                           w, mp_tfl_safe(t->name, nm, sizeof nm), i, mp_tfl_op_label(code),
                           (long long)t->quant.zero_point[k], where);
    }
    return MP_OK;
}

static mp_status read_operator(rd *r, const mp_fb_vec *ops, int32_t i, int32_t n_tensors, mp_op_info *op)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_table t, oc, opts, opts2;
    mp_fb_vec in, out, inter, copts;
    uint32_t opcode_index;
    uint8_t opt_type, opt2_type;
    int8_t copts_format;

    mp_fb_where(fb, "operator %d", i);
    if (!mp_fb_vec_table(fb, ops, (uint32_t)i, "table", &t) ||
        !mp_fb_u32(fb, &t, OP_OPCODE_INDEX, 0, "opcode_index", &opcode_index) ||
        !mp_fb_vector(fb, &t, OP_INPUTS, 4, "inputs", &in) ||
        !mp_fb_vector(fb, &t, OP_OUTPUTS, 4, "outputs", &out) ||
        !mp_fb_u8(fb, &t, OP_OPTIONS_TYPE, 0, "builtin_options_type", &opt_type) ||
        !mp_fb_sub_table(fb, &t, OP_OPTIONS, "builtin_options", &opts) ||
        !mp_fb_vector(fb, &t, OP_INTERMEDIATES, 4, "intermediates", &inter) ||
        !mp_fb_vector(fb, &t, OP_CUSTOM_OPTIONS, 1, "custom_options", &copts) ||
        !mp_fb_i8(fb, &t, OP_CUSTOM_OPTIONS_FORMAT, 0, "custom_options_format", &copts_format) ||
        !mp_fb_u8(fb, &t, OP_OPTIONS2_TYPE, 0, "builtin_options_2_type", &opt2_type) ||
        !mp_fb_sub_table(fb, &t, OP_OPTIONS2, "builtin_options_2", &opts2))
        return mp_tfl_fb_fault(r);
    if (opcode_index >= r->opcodes.n)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d uses operator code %u but the model has %u",
                       i, opcode_index, r->opcodes.n);

    /* Resolve the operator code: builtin = max(deprecated_builtin_code, builtin_code),
     * the schema's rule for files written before and after the code space grew. */
    int8_t dep;
    int32_t builtin, version;
    const char *custom;
    uint32_t custom_len;
    mp_fb_where(fb, "operator code %u", opcode_index);
    if (!mp_fb_vec_table(fb, &r->opcodes, opcode_index, "table", &oc) ||
        !mp_fb_i8(fb, &oc, OPCODE_DEPRECATED_BUILTIN, 0, "deprecated_builtin_code", &dep) ||
        !mp_fb_string(fb, &oc, OPCODE_CUSTOM, "custom_code", &custom, &custom_len) ||
        !mp_fb_i32(fb, &oc, OPCODE_VERSION, 1, "version", &version) ||
        !mp_fb_i32(fb, &oc, OPCODE_BUILTIN, 0, "builtin_code", &builtin))
        return mp_tfl_fb_fault(r);
    int code = builtin > dep ? builtin : dep;
    if (code == MP_OP_CUSTOM) {
        /* The custom operators memprof runs get codes of their own; the others are refused. */
        int own = mp_op_from_custom(custom, custom ? custom_len : 0);
        char cn[80];
        if (own < 0)
            return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d: custom operator '%s' is not supported",
                           i, mp_tfl_safe(custom ? custom : "(unnamed)", cn, sizeof cn));
        code = own;
    } else if (code < 0 || code >= MP_OP_CODE_COUNT || !mp_op_name(code)) {
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "operator %d uses unknown builtin operator code %d", i, code);
    }
    op->opcode = code;
    op->version = version;
    if (custom) {
        op->custom_code = mp_tfl_strdup(r->im, custom, custom_len);
        if (!op->custom_code)
            return mp_tfl_nomem(r);
    }

    /* Inputs, outputs and intermediates share one array, in that order: the
     * intermediates are op->outputs + op->n_outputs (mp_op_info has no field for them). */
    size_t total = (size_t)in.n + out.n + inter.n;
    if (total > INT32_MAX)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d has too many tensors", i);
    int32_t *idx = mp_tfl_array(r->im, total, sizeof(int32_t));
    if (!idx)
        return mp_tfl_nomem(r);
    TRY(read_indices(r, i, code, &in, "input", true, n_tensors, idx));
    TRY(read_indices(r, i, code, &out, "output", false, n_tensors, idx + in.n));
    TRY(read_indices(r, i, code, &inter, "intermediate", false, n_tensors, idx + in.n + out.n));
    op->n_inputs = (int32_t)in.n;
    op->n_outputs = (int32_t)out.n;
    op->n_intermediates = (int32_t)inter.n;
    op->inputs = idx;
    op->outputs = idx + in.n;
    op->intermediates = idx + in.n + out.n;
    TRY(check_symmetric_weights(r, i, code, op));

    /* Custom options stay raw, in the mapping (0 = FLEXBUFFERS, the only format there is). */
    if (copts.present) {
        op->custom_options = mp_fb_vec_data(fb, &copts);
        op->custom_options_size = copts.n;
    }
    TRY(mp_tfl_read_options(r, i, code, opt_type, &opts, &op->opt));
    TRY(mp_tfl_read_options2(r, i, code, opt2_type, &opts2, &op->opt));
    if (code >= MP_OP_CODE_COUNT) { /* a custom operator memprof runs */
        if (copts_format != 0)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): custom_options_format %d is not FLEXBUFFERS (0)",
                               i, mp_tfl_op_label(code), copts_format);
        TRY(mp_tfl_read_custom_options(r, i, op));
    }
    return MP_OK;
}

/* ---- model --------------------------------------------------------------------------- */

/* Subgraph input or output list: copy and range-check. */
static mp_status read_io(rd *r, const mp_fb_vec *v, const char *what, int32_t n_tensors, int32_t *n_out,
                         const int32_t **out)
{
    int32_t *dst = mp_tfl_array(r->im, v->n, sizeof(int32_t));
    if (!dst)
        return mp_tfl_nomem(r);
    for (uint32_t k = 0; k < v->n; k++) {
        int32_t t = mp_fb_vec_i32(&r->fb, v, k);
        if (t < 0 || t >= n_tensors)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "subgraph %s %u is tensor %d, out of range (%d tensors)",
                           what, k, t, n_tensors);
        dst[k] = t;
    }
    *n_out = (int32_t)v->n;
    *out = dst;
    return MP_OK;
}

/* Subgraph k into g: its tensors, operators, inputs, outputs and name, every index checked. */
static mp_status read_subgraph(rd *r, const mp_fb_vec *subgraphs, int32_t k, mp_model *g)
{
    mp_fb_reader *fb = &r->fb;
    mp_fb_table sg;
    mp_fb_vec tensors, inputs, outputs, operators;
    const char *sg_name;
    uint32_t sg_name_len;
    mp_fb_where(fb, "subgraph %d", (int)k);
    if (!mp_fb_vec_table(fb, subgraphs, (uint32_t)k, "table", &sg) ||
        !mp_fb_vector(fb, &sg, SG_TENSORS, 4, "tensors", &tensors) ||
        !mp_fb_vector(fb, &sg, SG_INPUTS, 4, "inputs", &inputs) ||
        !mp_fb_vector(fb, &sg, SG_OUTPUTS, 4, "outputs", &outputs) ||
        !mp_fb_vector(fb, &sg, SG_OPERATORS, 4, "operators", &operators) ||
        !mp_fb_string(fb, &sg, SG_NAME, "name", &sg_name, &sg_name_len))
        return mp_tfl_fb_fault(r);
    /* subgraph 0 is what runs; a called subgraph may be empty (a body passing its inputs
     * through has no operators, and the call checks its inputs and outputs) */
    if (k == 0 && tensors.n == 0 && operators.n == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "empty model: subgraph 0 has no operators and no tensors");
    /* Each element is a 4-byte offset inside the file, so these counts are bounded by the
     * file size; the INT32_MAX check only matters for files over 8 GB. */
    if (tensors.n > INT32_MAX || operators.n > INT32_MAX)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "subgraph %d has too many tensors or operators", (int)k);
    if (operators.n > MP_MAX_OPS)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "subgraph %d has %u operators, above memprof's limit of %d (MP_MAX_OPS)",
                       (int)k, operators.n, MP_MAX_OPS);
    if (tensors.n > MP_MAX_TENSORS)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "subgraph %d has %u tensors, above memprof's limit of %d (MP_MAX_TENSORS)",
                       (int)k, tensors.n, MP_MAX_TENSORS);
    g->subgraph_name = mp_tfl_strdup(r->im, sg_name ? sg_name : "", sg_name_len);
    g->tensors = mp_tfl_array(r->im, tensors.n, sizeof(mp_tensor_info));
    g->ops = mp_tfl_array(r->im, operators.n, sizeof(mp_op_info));
    if (!g->subgraph_name || !g->tensors || !g->ops)
        return mp_tfl_nomem(r);
    g->n_tensors = (int32_t)tensors.n;
    g->n_ops = (int32_t)operators.n;
    r->tensors = g->tensors;
    for (int32_t i = 0; i < g->n_tensors; i++)
        TRY(mp_tfl_read_tensor(r, &tensors, i, &g->tensors[i]));
    for (int32_t i = 0; i < g->n_ops; i++)
        TRY(read_operator(r, &operators, i, g->n_tensors, &g->ops[i]));
    TRY(read_io(r, &inputs, "input", g->n_tensors, &g->n_inputs, &g->inputs));
    TRY(read_io(r, &outputs, "output", g->n_tensors, &g->n_outputs, &g->outputs));
    return MP_OK;
}

const mp_model *mp_model_subgraph(const mp_model *m, int32_t k)
{
    if (k == 0)
        return m;
    return k > 0 && k < m->n_subgraphs ? &m->sub[k - 1] : NULL;
}

/* ---- calls between subgraphs (WHILE, IF, CALL_ONCE) ---------------------------------- */

/* The dtype of tensor t of subgraph g, for messages and checks. */
static mp_dtype sg_dtype(const mp_model *g, int32_t t)
{
    return g->tensors[t].dtype;
}

/* One side of a call: `n` tensors of the caller (`ct`, of subgraph `caller`) against `n` of
 * the callee's list (`gt`, of subgraph `g`): same dtypes. */
static mp_status check_call_dtypes(rd *r, int32_t i, int code, const mp_model *caller, const int32_t *ct,
                                   int32_t k, const mp_model *g, const int32_t *gt, int32_t n,
                                   const char *what)
{
    for (int32_t j = 0; j < n; j++) {
        if (ct[j] < 0)
            continue;
        mp_dtype a = sg_dtype(caller, ct[j]), b = sg_dtype(g, gt[j]);
        if (a != b)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s %d is %s but subgraph %d's is %s",
                               i, mp_tfl_op_label(code), what, j, mp_dtype_name(a), (int)k,
                               mp_dtype_name(b));
    }
    return MP_OK;
}


/* CALL_ONCE (operator i of `caller`): no inputs or outputs, and an initialization subgraph in
 * range that takes and gives nothing (TensorFlow Lite's call_once.cc Prepare). */
static mp_status check_call_once(rd *r, const mp_model *caller, int32_t i)
{
    const mp_op_info *op = &caller->ops[i];
    int32_t k = op->opt.subgraph_a;
    if (op->n_inputs != 0 || op->n_outputs != 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (CALL_ONCE) has %d inputs and %d outputs; it takes and gives none",
                           i, op->n_inputs, op->n_outputs);
    if (k < 0 || k >= r->m->n_subgraphs)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (CALL_ONCE): init subgraph %d is out of range (%d subgraphs)",
                           i, (int)k, r->m->n_subgraphs);
    const mp_model *g = mp_model_subgraph(r->m, k);
    if (g->n_inputs != 0 || g->n_outputs != 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (CALL_ONCE): init subgraph %d takes %d inputs and gives %d outputs; "
                           "it must take and give none", i, (int)k, g->n_inputs, g->n_outputs);
    return MP_OK;
}

/* Operator i of subgraph `caller` (a WHILE, IF, STABLEHLO_COMPOSITE or STABLEHLO_CASE) against
 * the subgraphs it calls. */
static mp_status check_call(rd *r, const mp_model *caller, int32_t i)
{
    const mp_model *m = r->m;
    const mp_op_info *op = &caller->ops[i];
    int code = op->opcode;
    const char *nm = mp_tfl_op_label(code);
    int32_t idx[2] = {op->opt.subgraph_a, op->opt.subgraph_b};
    bool composite = code == MP_OP_STABLEHLO_COMPOSITE; /* one callee, in both slots */
    bool cases = code == MP_OP_STABLEHLO_CASE;          /* its branches */
    int32_t n_callees = mp_op_n_callees(op);
    if (code == MP_OP_CALL_ONCE)
        return check_call_once(r, caller, i);
    if (cases && n_callees == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has no branches", i, nm);
    for (int32_t q = 0; q < n_callees; q++) {
        int32_t k = mp_op_callee(op, q);
        if (k >= 0 && k < m->n_subgraphs)
            continue;
        if (cases)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): branch %d's subgraph %d is out of range (%d subgraphs)",
                               i, nm, (int)q, (int)k, m->n_subgraphs);
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s subgraph %d is out of range (%d subgraphs)",
                           i, nm, composite ? "decomposition"
                                  : code == MP_OP_WHILE ? (q ? "body" : "cond") : (q ? "else" : "then"),
                           (int)k, m->n_subgraphs);
    }
    for (int32_t q = 0; q < n_callees; q++) { /* a call writes the callee's inputs */
        idx[q % 2] = mp_op_callee(op, q);
        const mp_model *g = mp_model_subgraph(m, idx[q % 2]);
        for (int32_t j = 0; j < g->n_inputs; j++)
            if (g->tensors[g->inputs[j]].data)
                return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) calls subgraph %d, whose input %d is a constant",
                                   i, nm, (int)idx[q % 2], (int)j);
    }
    idx[0] = op->opt.subgraph_a;
    idx[1] = op->opt.subgraph_b;
    if (code == MP_OP_WHILE) {
        const mp_model *cond = mp_model_subgraph(m, idx[0]), *body = mp_model_subgraph(m, idx[1]);
        int32_t n = op->n_inputs;
        if (op->n_outputs != n)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s) has %d inputs but %d outputs (the loop variables: as many)",
                               i, nm, n, op->n_outputs);
        if (cond->n_inputs != n || cond->n_outputs != 1)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): cond subgraph %d takes %d inputs and gives %d outputs; "
                               "the loop has %d variables and cond gives 1",
                               i, nm, (int)idx[0], cond->n_inputs, cond->n_outputs, n);
        if (body->n_inputs != n || body->n_outputs != n)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): body subgraph %d takes %d inputs and gives %d outputs; "
                               "the loop has %d variables",
                               i, nm, (int)idx[1], body->n_inputs, body->n_outputs, n);
        if (sg_dtype(cond, cond->outputs[0]) != MP_DT_BOOL)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): cond subgraph %d's output is %s, not bool",
                               i, nm, (int)idx[0], mp_dtype_name(sg_dtype(cond, cond->outputs[0])));
        TRY(check_call_dtypes(r, i, code, caller, op->inputs, idx[0], cond, cond->inputs, n, "input"));
        TRY(check_call_dtypes(r, i, code, caller, op->inputs, idx[1], body, body->inputs, n, "input"));
        TRY(check_call_dtypes(r, i, code, caller, op->inputs, idx[1], body, body->outputs, n,
                              "input (as body output)"));
        TRY(check_call_dtypes(r, i, code, caller, op->outputs, idx[1], body, body->outputs, n, "output"));
        return MP_OK;
    }
    /* IF: input 0 the condition, the rest the branch's inputs; outputs the branch's.
     * STABLEHLO_CASE: the same with input 0 the branch's index (int32).
     * STABLEHLO_COMPOSITE: every input the decomposition's, outputs the decomposition's. */
    int32_t skip = composite ? 0 : 1;
    if (!composite && !cases && (op->n_inputs < 1 || op->inputs[0] < 0 || sg_dtype(caller, op->inputs[0]) != MP_DT_BOOL))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): input 0 (the condition) must be a bool tensor",
                           i, nm);
    if (cases && (op->n_inputs < 1 || op->inputs[0] < 0 || sg_dtype(caller, op->inputs[0]) != MP_DT_INT32))
        return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): input 0 (the branch index) must be an int32 tensor",
                           i, nm);
    for (int32_t q = 0; q < n_callees; q++) {
        int32_t k = mp_op_callee(op, q);
        const mp_model *g = mp_model_subgraph(m, k);
        char what[32];
        snprintf(what, sizeof what, "%s", composite ? "decomposition" : cases ? "branch" : q ? "else" : "then");
        if (cases)
            snprintf(what, sizeof what, "branch %d's", (int)q);
        if (g->n_inputs != op->n_inputs - skip || g->n_outputs != op->n_outputs)
            return mp_tfl_fail(r, MP_ERR_FORMAT, "operator %d (%s): %s subgraph %d takes %d inputs and gives %d outputs; "
                               "the operator passes %d and takes %d",
                               i, nm, what, (int)k, g->n_inputs, g->n_outputs, op->n_inputs - skip, op->n_outputs);
        TRY(check_call_dtypes(r, i, code, caller, op->inputs + skip, k, g, g->inputs, g->n_inputs,
                              composite ? "input" : "branch input"));
        TRY(check_call_dtypes(r, i, code, caller, op->outputs, k, g, g->outputs, g->n_outputs, "output"));
    }
    return MP_OK;
}

/* Every call fits its subgraphs, and the calls form no cycle (a subgraph calling itself,
 * directly or through others: TensorFlow Lite has no recursion) and nest at most
 * MP_MAX_SUBGRAPH_DEPTH deep. An iterative depth-first walk over the call graph: a crafted
 * file cannot exhaust the stack. */
static mp_status check_calls(rd *r)
{
    const mp_model *m = r->m;
    int32_t n = m->n_subgraphs;
    for (int32_t k = 0; k < n; k++) {
        const mp_model *g = mp_model_subgraph(m, k);
        r->sg = k;
        for (int32_t i = 0; i < g->n_ops; i++) {
            if (mp_op_calls_subgraphs(g->ops[i].opcode))
                TRY(check_call(r, g, i));
            TRY(mp_tfl_check_shlo_calls(r, g, i));
        }
    }
    r->sg = 0;
    if (n == 1)
        return MP_OK;
    /* state per subgraph: 0 unseen, 1 on the walk's path, 2 done; depth: longest chain of
     * calls from it (done ones) */
    uint8_t *state = mp_tfl_array(r->im, (size_t)n, 1);
    int32_t *depth = mp_tfl_array(r->im, (size_t)n, sizeof(int32_t));
    /* the path: subgraph, next operator to look at, next of its callees */
    int32_t *path_sg = mp_tfl_array(r->im, (size_t)n, sizeof(int32_t));
    int32_t *path_op = mp_tfl_array(r->im, (size_t)n, sizeof(int32_t));
    int32_t *path_q = mp_tfl_array(r->im, (size_t)n, sizeof(int32_t));
    if (!state || !depth || !path_sg || !path_op || !path_q)
        return mp_tfl_nomem(r);
    for (int32_t root = 0; root < n; root++) {
        if (state[root])
            continue;
        int32_t top = 0;
        path_sg[0] = root;
        path_op[0] = path_q[0] = 0;
        state[root] = 1;
        while (top >= 0) {
            int32_t v = path_sg[top];
            const mp_model *g = mp_model_subgraph(m, v);
            /* the next callee: callee path_q of operator path_op */
            int32_t callee = -1, at = -1;
            while (path_op[top] < g->n_ops && callee < 0) {
                const mp_op_info *op = &g->ops[path_op[top]];
                if (path_q[top] < mp_op_n_callees(op)) {
                    callee = mp_op_callee(op, path_q[top]++);
                    at = path_op[top];
                } else {
                    path_op[top]++;
                    path_q[top] = 0;
                }
            }
            if (callee < 0) { /* every callee done */
                state[v] = 2;
                top--;
                if (top >= 0 && depth[v] + 1 > depth[path_sg[top]])
                    depth[path_sg[top]] = depth[v] + 1;
                continue;
            }
            if (state[callee] == 1) {
                r->sg = v;
                return mp_tfl_fail(r, MP_ERR_FORMAT,
                                   "operator %d (%s) calls subgraph %d, which is running already: %s "
                                   "(subgraphs cannot call themselves)",
                                   (int)at, mp_tfl_op_label(g->ops[at].opcode), (int)callee,
                                   callee == v ? "itself" : "a cycle of calls");
            }
            if (state[callee] == 2) {
                if (depth[callee] + 1 > depth[v])
                    depth[v] = depth[callee] + 1;
            } else {
                state[callee] = 1;
                path_sg[++top] = callee;
                path_op[top] = path_q[top] = 0;
            }
            if (depth[v] > MP_MAX_SUBGRAPH_DEPTH || top > MP_MAX_SUBGRAPH_DEPTH) {
                r->sg = v;
                return mp_tfl_fail(r, MP_ERR_UNSUPPORTED,
                                   "operator %d (%s): subgraph calls nest deeper than %d (memprof's limit, "
                                   "MP_MAX_SUBGRAPH_DEPTH)",
                                   (int)at, mp_tfl_op_label(g->ops[at].opcode), MP_MAX_SUBGRAPH_DEPTH);
            }
        }
    }
    return MP_OK;
}

static mp_status parse(rd *r)
{
    mp_fb_reader *fb = &r->fb;
    mp_model *m = r->m;
    const uint8_t *b = fb->base;

    if (fb->size == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "empty file (0 bytes), not a TensorFlow Lite model");
    if (fb->size < 8)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "truncated: file is %zu bytes, too short for a TensorFlow Lite model",
                       fb->size);
    if (memcmp(b + 4, "TFL3", 4) != 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT,
                       "not a TensorFlow Lite model (file identifier is %02x %02x %02x %02x, expected TFL3)",
                       b[4], b[5], b[6], b[7]);

    mp_fb_table root;
    mp_fb_vec subgraphs;
    const char *desc;
    uint32_t desc_len;
    mp_fb_where(fb, "model");
    if (!mp_fb_root(fb, &root) ||
        !mp_fb_u32(fb, &root, MODEL_VERSION, 0, "version", &m->version) ||
        !mp_fb_vector(fb, &root, MODEL_OPERATOR_CODES, 4, "operator_codes", &r->opcodes) ||
        !mp_fb_vector(fb, &root, MODEL_SUBGRAPHS, 4, "subgraphs", &subgraphs) ||
        !mp_fb_string(fb, &root, MODEL_DESCRIPTION, "description", &desc, &desc_len) ||
        !mp_fb_vector(fb, &root, MODEL_BUFFERS, 4, "buffers", &r->buffers))
        return mp_tfl_fb_fault(r);
    if (m->version != TFL_SCHEMA_VERSION)
        return mp_tfl_fail(r, MP_ERR_UNSUPPORTED, "schema version %u is not supported (memprof reads version %d)",
                       m->version, TFL_SCHEMA_VERSION);
    m->description = mp_tfl_strdup(r->im, desc ? desc : "", desc_len);
    if (!m->description)
        return mp_tfl_nomem(r);
    if (subgraphs.n == 0)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "model has no subgraphs");
    if (subgraphs.n > MP_MAX_OPS)
        return mp_tfl_fail(r, MP_ERR_FORMAT, "model has %u subgraphs, above memprof's limit of %d (MP_MAX_OPS)",
                           subgraphs.n, MP_MAX_OPS);
    r->counted = mp_tfl_array(r->im, (size_t)r->buffers.n / 8 + 1, 1);
    mp_model *views = mp_tfl_array(r->im, subgraphs.n - 1, sizeof(mp_model));
    if (!r->counted || !views)
        return mp_tfl_nomem(r);
    m->n_subgraphs = (int32_t)subgraphs.n;
    m->sub = views;
    for (uint32_t k = 0; k < subgraphs.n; k++) {
        mp_model *g = k == 0 ? m : &views[k - 1];
        r->sg = (int32_t)k;
        TRY(read_subgraph(r, &subgraphs, (int32_t)k, g));
        if (k > 0) {
            /* a subgraph's messages name it: "model.tflite (subgraph 2): operator #0 ..." */
            char label[64];
            int ll = snprintf(label, sizeof label, " (subgraph %u)", k);
            size_t pl = strlen(m->path);
            char *path = mp_tfl_alloc(r->im, pl + (size_t)ll + 1);
            if (!path)
                return mp_tfl_nomem(r);
            memcpy(path, m->path, pl);
            memcpy(path + pl, label, (size_t)ll + 1);
            g->path = path;
            g->version = m->version;
            g->description = m->description;
        }
    }
    r->sg = 0;
    TRY(check_calls(r));
    for (int32_t k = 1; k < m->n_subgraphs; k++) { /* sizes known only now */
        views[k - 1].file_bytes = m->file_bytes;
        views[k - 1].const_bytes = m->const_bytes;
        views[k - 1].dense_bytes = m->dense_bytes;
        views[k - 1].unpacked_bytes = m->unpacked_bytes;
    }
    return MP_OK;
}

/* Build a model over bytes already placed in im (mapping or owned copy). */
static mp_status load(const char *label, const uint8_t *bytes, size_t size, rd_impl *im,
                      mp_model **out, mp_error *err)
{
    mp_model *m = calloc(1, sizeof *m);
    if (!m) {
        /* Release what the caller handed over before reporting. */
        if (im->map)
            munmap(im->map, im->map_len);
        free(im);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    m->impl = im;
    m->file_bytes = size;
    im->budget = budget_for(size);

    rd r;
    memset(&r, 0, sizeof r);
    mp_fb_init(&r.fb, bytes, size);
    r.path = label;
    r.err = err;
    r.m = m;
    r.im = im;

    char *path = mp_tfl_strdup(im, label, strlen(label));
    if (!path) {
        mp_model_free(m);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    m->path = path;
    r.path = path;

    mp_status st = parse(&r);
    if (st != MP_OK) {
        /* The message was formatted from r.path, which lives in the arena: it is already
         * copied into err, so freeing now is safe. */
        mp_model_free(m);
        return st;
    }
    m->heap_bytes = im->heap + sizeof *im + sizeof *m;
    *out = m;
    return MP_OK;
}

mp_status mp_model_load_file(const char *path, mp_model **out, mp_error *err)
{
    *out = NULL;
    if (!path)
        return mp_fail(err, MP_ERR_ARG, "no model path given");
    /* Non-blocking: a FIFO without writer must not hang the open (it is refused below). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return mp_fail(err, MP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: not a regular file", path);
    }
    if (sb.st_size <= 0) {
        close(fd);
        return mp_fail(err, MP_ERR_FORMAT, "%s: empty file (0 bytes), not a TensorFlow Lite model", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: file too large to map", path);
    }
    size_t size = (size_t)sb.st_size;
    /* Reserve the file's size plus MP_MODEL_TAIL_SLACK of zero pages, then map the file over
     * the start: a constant that ends the file stays readable 16 bytes past its end (a plain
     * file mapping would fault there when the file size is a multiple of the page size). */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - MP_MODEL_TAIL_SLACK - page) {
        close(fd);
        return mp_fail(err, MP_ERR_IO, "%s: file too large to map", path);
    }
    size_t map_len = (size + MP_MODEL_TAIL_SLACK + page - 1) / page * page;
    void *map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map != MAP_FAILED && mmap(map, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        int e2 = errno;
        munmap(map, map_len);
        map = MAP_FAILED;
        errno = e2;
    }
    int e = errno;
    close(fd); /* the mapping keeps the file alive */
    if (map == MAP_FAILED)
        return mp_fail(err, MP_ERR_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(e));
    rd_impl *im = calloc(1, sizeof *im);
    if (!im) {
        munmap(map, map_len);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", path);
    }
    im->map = map;
    im->map_len = map_len;
    return load(path, map, size, im, out, err);
}

mp_status mp_model_load_memory(const void *bytes, size_t size, const char *label, mp_model **out,
                               mp_error *err)
{
    *out = NULL;
    if (!label)
        label = "<memory>";
    if (!bytes && size)
        return mp_fail(err, MP_ERR_ARG, "%s: no model bytes given", label);
    if (size == 0)
        return mp_fail(err, MP_ERR_FORMAT, "%s: empty file (0 bytes), not a TensorFlow Lite model", label);
    /* One owned copy in an anonymous mapping (page-aligned, so constant data keeps the
     * alignment it has relative to the start of the file), like a file's mapping: the
     * weights are "mapped" memory for the trace, not heap. */
    long page = sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - MP_MODEL_TAIL_SLACK - (size_t)page)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory copying %zu bytes", label, size);
    size_t map_len = (size + MP_MODEL_TAIL_SLACK + (size_t)page - 1) / (size_t)page * (size_t)page;
    void *copy = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copy == MAP_FAILED)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory copying %zu bytes", label, size);
    memcpy(copy, bytes, size); /* the tail stays zero: see MP_MODEL_TAIL_SLACK */
    mprotect(copy, map_len, PROT_READ);
    rd_impl *im = calloc(1, sizeof *im);
    if (!im) {
        munmap(copy, map_len);
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory while reading the model", label);
    }
    im->map = copy;
    im->map_len = map_len;
    return load(label, copy, size, im, out, err);
}
