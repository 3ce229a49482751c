/* The XNNPACK peer's life cycle (see xnnpack_runtime.h): build the subgraph, create and set
 * up XNNPACK's runtime inside capture windows, run it on the peer's input and output
 * buffers, report what XNNPACK allocated, and delete everything.
 *
 * Every XNNPACK call the peer makes sits between mp_xc_begin() and mp_xc_end(), so every block
 * XNNPACK makes for the peer, and every free of one, goes to the peer's capture. */
#include <stdlib.h>
#include <string.h>

#include "engine/kernels/kernel.h"
#include "peers/xnnpack_internal.h"

static void free_peer(mp_xnn_peer *p)
{
    if (p->rt) {
        mp_xc_begin(&p->cap, MP_XC_DELETE);
        xnn_delete_runtime(p->rt);
        mp_xc_end();
        p->rt = NULL;
    }
    mp_xc_unreserve(&p->cap);
    if (p->pool && p->pool_owned)
        pthreadpool_destroy(p->pool);
    for (int i = 0; p->in && i < p->n_in; i++)
        free(p->in[i].buf);
    for (int i = 0; p->out && i < p->n_out; i++)
        free(p->out[i].buf);
    free(p->in);
    free(p->out);
    p->in = p->out = NULL;
    p->n_in = p->n_out = 0;
    for (int i = 0; i < p->n_copies; i++)
        free(p->copies[i]);
    free(p->copies);
    p->copies = NULL;
    p->n_copies = 0;
}

/* The workspace: the last aligned block xnn_create_runtime_v2 made that is still alive after
 * the subgraph's deletion. It must hold the largest internal value and can be no larger
 * than all of them side by side, each rounded to 16 bytes as XNNPACK's planner does, plus
 * XNN_EXTRA_BYTES of tail (this build asks for the planned arena + 16). */
static void find_workspace(mp_xnn_peer *p)
{
    const mp_xc_block *ws = NULL;
    for (const mp_xc_block *b = mp_xc_first(&p->cap); b; b = mp_xc_next(&p->cap, b))
        if (b->phase == MP_XC_CREATE && b->aligned && (!ws || b->seq > ws->seq))
            ws = b;
    bool fits = ws && ws->bytes <= p->internal_sum16 + XNN_EXTRA_BYTES &&
                ws->bytes >= p->internal_largest;
    /* Without internal values this XNNPACK allocates no workspace at all: the last aligned
     * block is then an operator's, too large to be a workspace of nothing. */
    p->workspace_seq = fits ? ws->seq : 0;
    p->workspace_found = fits || p->internal_values == 0;
}

static void *io_buffer(size_t bytes)
{
    return mp_xc_aligned_zero(64, bytes + XNN_EXTRA_BYTES);
}

static mp_status peer_xnn_fail(const mp_session *s, const char *what, enum xnn_status xs,
                               mp_error *err)
{
    return mp_fail(err, mp_xnn_status(xs), "%s: XNNPACK peer: %s: %s (status %d)",
                   mp_session_model(s)->path, what, mp_xnn_status_text(xs), (int)xs);
}

mp_status mp_xnn_peer_create(const mp_session *s, const mp_xnn_peer_options *opt,
                             mp_xnn_peer **out, mp_error *err)
{
    *out = NULL;
    if (!s || !mp_session_model(s))
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: needs a loaded, prepared session");
    enum xnn_status xs = (enum xnn_status)mp_mem_xnn_init();
    if (xs != xnn_status_success)
        return mp_fail(err, mp_xnn_status(xs), "XNNPACK peer: xnn_initialize: %s",
                       mp_xnn_status_text(xs));
    bool op_aligned;
    (void)mp_xc_operator_size(&op_aligned); /* measured before any window of ours opens */
    mp_xnn_peer *p = mp_xc_calloc(1, sizeof *p);
    if (!p)
        return mp_fail(err, MP_ERR_NOMEM, "XNNPACK peer: out of memory");
    mp_xc_init(&p->cap);
    int threads = opt && opt->threads > 1 ? opt->threads : 1;
    if (opt && opt->threadpool) {
        p->pool = (pthreadpool_t)opt->threadpool;
    } else if (threads > 1) {
        p->pool_owned = true;
        p->pool = pthreadpool_create((size_t)threads);
        if (!p->pool) {
            free(p);
            return mp_fail(err, MP_ERR_BACKEND, "XNNPACK peer: cannot create %d threads",
                           threads);
        }
    }

    xnn_subgraph_t sg = NULL;
    mp_xc_begin(&p->cap, MP_XC_BUILD);
    mp_status st = mp_xnn_peer_build(p, s, &sg, err);
    mp_xc_end();
    p->subgraph_bytes = p->cap.live_bytes;
    if (st != MP_OK)
        goto fail;

    /* room for the value-usage tables XNNPACK's planner does not check (mp_xc_reserve), with
     * plenty to spare: about 48 bytes per value, at most two values per tensor */
    const mp_model *m = mp_session_model(s);
    if (!mp_xc_reserve(&p->cap, ((size_t)64 << 10) + 256 * ((size_t)m->n_tensors + (size_t)m->n_ops))) {
        mp_xc_begin(&p->cap, MP_XC_CREATE);
        xnn_delete_subgraph(sg);
        mp_xc_end();
        st = mp_fail(err, MP_ERR_NOMEM, "%s: XNNPACK peer: out of memory", m->path);
        goto fail;
    }
    mp_xc_begin(&p->cap, MP_XC_CREATE);
    /* success without a runtime: an allocation failed late in it (mp_xnn_created) */
    xs = xnn_create_runtime_v2(sg, p->pool, 0, &p->rt);
    xs = mp_xnn_created(xs, p->rt);
    xnn_delete_subgraph(sg);
    mp_xc_end();
    mp_xc_unreserve(&p->cap);
    if (xs != xnn_status_success) {
        p->rt = NULL;
        st = peer_xnn_fail(s, "xnn_create_runtime_v2", xs, err);
        goto fail;
    }
    find_workspace(p);

    size_t n_ext = (size_t)(p->n_in + p->n_out);
    struct xnn_external_value *ext = mp_xc_calloc(n_ext + 1, sizeof *ext);
    if (!ext) {
        st = mp_fail(err, MP_ERR_NOMEM, "XNNPACK peer: out of memory");
        goto fail;
    }
    size_t k = 0;
    for (int i = 0; i < p->n_in + p->n_out; i++) {
        peer_io *io = i < p->n_in ? &p->in[i] : &p->out[i - p->n_in];
        bool seen = false; /* a tensor both input and output, or listed twice: one buffer */
        for (size_t j = 0; j < k; j++)
            seen = seen || ext[j].id == io->id;
        if (seen)
            continue; /* io->buf stays NULL: buffer_of() finds the owner */
        io->buf = io_buffer(io->bytes);
        if (!io->buf) {
            free(ext);
            st = mp_fail(err, MP_ERR_NOMEM, "XNNPACK peer: out of memory for I/O buffers");
            goto fail;
        }
        ext[k].id = io->id;
        ext[k].data = io->buf;
        k++;
    }
    mp_xc_begin(&p->cap, MP_XC_SETUP);
    xs = xnn_setup_runtime(p->rt, k, ext);
    mp_xc_end();
    free(ext);
    if (xs != xnn_status_success) {
        st = peer_xnn_fail(s, "xnn_setup_runtime", xs, err);
        goto fail;
    }
    *out = p;
    return MP_OK;
fail:
    free_peer(p);
    free(p);
    return st;
}

void mp_xnn_peer_destroy(mp_xnn_peer *p, mp_xnn_peer_memory *final)
{
    if (!p)
        return;
    free_peer(p);
    if (final)
        mp_xnn_peer_memory_info(p, final);
    free(p);
}

int mp_xnn_peer_input_count(const mp_xnn_peer *p)
{
    return p->n_in;
}

int mp_xnn_peer_output_count(const mp_xnn_peer *p)
{
    return p->n_out;
}

size_t mp_xnn_peer_input_bytes(const mp_xnn_peer *p, int i)
{
    return i >= 0 && i < p->n_in ? p->in[i].bytes : 0;
}

size_t mp_xnn_peer_output_bytes(const mp_xnn_peer *p, int i)
{
    return i >= 0 && i < p->n_out ? p->out[i].bytes : 0;
}

/* The buffer of an external value (the first entry with its id owns it). */
static void *buffer_of(const mp_xnn_peer *p, uint32_t id)
{
    for (int i = 0; i < p->n_in + p->n_out; i++) {
        const peer_io *io = i < p->n_in ? &p->in[i] : &p->out[i - p->n_in];
        if (io->id == id && io->buf)
            return io->buf;
    }
    return NULL;
}

mp_status mp_xnn_peer_set_input(mp_xnn_peer *p, int i, const void *data, size_t bytes,
                                mp_error *err)
{
    if (i < 0 || i >= p->n_in)
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: no input %d", i);
    if (bytes != p->in[i].bytes)
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: input %d takes %zu bytes, not %zu", i,
                       p->in[i].bytes, bytes);
    memcpy(buffer_of(p, p->in[i].id), data, bytes);
    return MP_OK;
}

mp_status mp_xnn_peer_run(mp_xnn_peer *p, mp_error *err)
{
    uint64_t before = p->cap.phase_allocs[MP_XC_RUN];
    mp_xc_begin(&p->cap, MP_XC_RUN);
    enum xnn_status xs = xnn_invoke_runtime(p->rt);
    mp_xc_end();
    p->runs++;
    p->run_allocations += p->cap.phase_allocs[MP_XC_RUN] - before;
    if (xs != xnn_status_success)
        return mp_fail(err, mp_xnn_status(xs), "XNNPACK peer: xnn_invoke_runtime: %s (status %d)",
                       mp_xnn_status_text(xs), (int)xs);
    return MP_OK;
}

mp_status mp_xnn_peer_get_output(const mp_xnn_peer *p, int i, void *dst, size_t bytes,
                                 mp_error *err)
{
    if (i < 0 || i >= p->n_out)
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: no output %d", i);
    if (bytes != p->out[i].bytes)
        return mp_fail(err, MP_ERR_ARG, "XNNPACK peer: output %d has %zu bytes, not %zu", i,
                       p->out[i].bytes, bytes);
    memcpy(dst, buffer_of(p, p->out[i].id), bytes);
    return MP_OK;
}

const float *mp_xnn_peer_output(const mp_xnn_peer *p, int i)
{
    return i >= 0 && i < p->n_out ? buffer_of(p, p->out[i].id) : NULL;
}

void mp_xnn_peer_memory_info(const mp_xnn_peer *p, mp_xnn_peer_memory *out)
{
    memset(out, 0, sizeof *out);
    bool op_aligned;
    size_t op_size = mp_xc_operator_size(&op_aligned);
    for (const mp_xc_block *b = mp_xc_first(&p->cap); b; b = mp_xc_next(&p->cap, b)) {
        out->live_bytes += b->bytes;
        out->live_count++;
        if (b->seq == p->workspace_seq) {
            out->workspace_bytes = b->bytes;
            continue;
        }
        out->other_bytes += b->bytes;
        if (b->phase == MP_XC_SETUP || b->phase == MP_XC_RUN) {
            out->setup_bytes += b->bytes;
            out->setup_count++;
        } else if (b->aligned && op_size && b->bytes == op_size && op_aligned) {
            out->operator_bytes += b->bytes;
            out->operator_count++;
        } else if (b->aligned) {
            out->weights_bytes += b->bytes;
            out->weights_count++;
        } else {
            out->tables_bytes += b->bytes;
            out->tables_count++;
        }
    }
    out->workspace_found = p->workspace_found;
    out->workspace_upper_bound = p->internal_sum16 + XNN_EXTRA_BYTES;
    out->internal_values = p->internal_values;
    out->subgraph_bytes = p->subgraph_bytes;
    out->peak_bytes = p->cap.peak_bytes;
    out->n_alloc = p->cap.n_alloc;
    out->n_free = p->cap.n_free;
    out->n_realloc = p->cap.n_realloc;
    out->bytes_allocated = p->cap.bytes_alloc;
    out->bytes_freed = p->cap.bytes_free;
    out->run_allocations = p->run_allocations;
    out->runs = p->runs;
    for (int i = 0; i < p->n_in + p->n_out; i++) {
        const peer_io *io = i < p->n_in ? &p->in[i] : &p->out[i - p->n_in];
        if (io->buf)
            out->external_bytes += io->bytes;
    }
    out->static_copy_bytes = p->static_copy_bytes;
    out->xnn_nodes = p->xnn_nodes;
}
