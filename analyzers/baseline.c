/* Baseline: the deterministic figures a memory gate compares, from a trace, and their JSON
 * file (see baseline.h). */
#include "analyzers/baseline.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/replay.h"
#include "trace/files.h"
#include "trace/safe_text.h"

static const char *const fig_names[MP_FIG_COUNT] = {
    "tensors",  "static",    "dynamic",  "scratch",   "io",         "const",
    "kernel",   "engine",    "heap",     "variable",  "activation", "trainable",
    "backprop", "gradient",  "optimizer", "disposable", "extra",    "rss",
};

const char *mp_figure_name(int f)
{
    return f >= 0 && f < MP_FIG_COUNT ? fig_names[f] : NULL;
}

int mp_figure_parse(const char *s)
{
    for (int f = 0; s && f < MP_FIG_COUNT; f++)
        if (strcmp(s, fig_names[f]) == 0)
            return f;
    return -1;
}

bool mp_figure_machine_dependent(int f)
{
    return f == MP_FIG_KERNEL || f == MP_FIG_ENGINE || f == MP_FIG_HEAP || f == MP_FIG_RSS;
}

bool mp_figure_optional(int f)
{
    return f >= MP_FIG_VARIABLE && f <= MP_FIG_EXTRA;
}

bool mp_figure_gated_by_default(int f)
{
    return (f >= MP_FIG_TENSORS && f <= MP_FIG_IO) || mp_figure_optional(f);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static char *dup_str(const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A copy of s that jansson accepts as a string: when s is not valid UTF-8, every byte
 * above 0x7f becomes '?'. */
static char *clean_str(const char *s)
{
    char *d = dup_str(s);
    if (!d)
        return NULL;
    json_t *j = json_string(d);
    if (j) {
        json_decref(j);
        return d;
    }
    for (char *c = d; *c; c++)
        if ((unsigned char)*c > 0x7f)
            *c = '?';
    return d;
}

void mp_baseline_free(mp_baseline *b)
{
    if (!b)
        return;
    free(b->model);
    free(b->sha256);
    free(b->mode);
    free(b->planner);
    for (size_t i = 0; i < b->n_inputs; i++) {
        free(b->inputs[i].name);
        free(b->inputs[i].dims);
    }
    free(b->inputs);
    for (size_t i = 0; i < b->n_tensors; i++)
        free(b->tensors[i].name);
    free(b->tensors);
    memset(b, 0, sizeof *b);
}

bool mp_baseline_add_input(mp_baseline *b, const char *name, const char *dims)
{
    mp_baseline_input *in = realloc(b->inputs, (b->n_inputs + 1) * sizeof *in);
    if (!in)
        return false;
    b->inputs = in;
    char *n = clean_str(name), *d = clean_str(dims);
    if (!n || !d) {
        free(n);
        free(d);
        return false;
    }
    /* kept in name order, the order a baseline file holds them in (its keys are sorted): a
     * baseline made from a run and one read back compare input by input */
    size_t at = b->n_inputs;
    while (at > 0 && strcmp(in[at - 1].name, n) > 0) {
        in[at] = in[at - 1];
        at--;
    }
    in[at].name = n;
    in[at].dims = d;
    b->n_inputs++;
    return true;
}

static int cmp_tensor(const void *x, const void *y)
{
    const mp_baseline_tensor *a = x, *b = y;
    return strcmp(a->name, b->name);
}

const mp_baseline_tensor *mp_baseline_find(const mp_baseline *b, const char *name)
{
    if (!b->n_tensors || !name)
        return NULL;
    mp_baseline_tensor key = {.name = (char *)name};
    return bsearch(&key, b->tensors, b->n_tensors, sizeof key, cmp_tensor);
}

/* ---- from a trace --------------------------------------------------------------------- */

/* The kinds of tensor memory: the inference engine's, and a training step's tensors that
 * are not persistent (weights and optimizer variables are, as constants are). */
static const int tensor_kinds[] = {
    MP_KIND_STATIC,          MP_KIND_DYNAMIC,        MP_KIND_SCRATCH,
    MP_KIND_TRAIN_ACTIVATION, MP_KIND_TRAIN_BACKPROP, MP_KIND_TRAIN_GRADIENT,
    MP_KIND_TRAIN_DISPOSABLE, MP_KIND_TRAIN_EXTRA,
};

/* The most bytes of the tensor kinds and io (the caller's own buffers left out) live at
 * once, over every event. */
static mp_status tensor_peak(mp_source *src, uint64_t *peak, mp_error *err)
{
    const mp_trace_meta *m = mp_source_meta(src);
    mp_replay *r = mp_replay_create(m->n_tensors);
    if (!r)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    mp_status st = mp_source_rewind(src, err);
    uint64_t best = 0, caller = 0; /* caller: the caller's own buffers live (trace.h) */
    mp_event ev;
    mp_replay_change c;
    int got = 0;
    while (st == MP_OK && (got = mp_source_next(src, &ev, err)) == 1) {
        if (!mp_replay_step(r, &ev, &c)) {
            st = mp_replay_fail(r, mp_source_name(src), "baseline", err);
            break;
        }
        if ((c.what == MP_REPLAY_ALLOC || c.what == MP_REPLAY_REALLOC ||
             c.what == MP_REPLAY_FREE) && mp_trace_id_is_caller(c.block.id)) {
            uint64_t before = c.what == MP_REPLAY_ALLOC ? 0 : c.what == MP_REPLAY_REALLOC
                                                                  ? c.old_bytes
                                                                  : c.block.bytes;
            caller -= before < caller ? before : caller;
            caller += c.what == MP_REPLAY_FREE ? 0 : c.block.bytes;
        }
        uint64_t io = mp_replay_live(r, MP_KIND_IO);
        uint64_t live = io - (caller < io ? caller : io);
        for (size_t k = 0; k < sizeof tensor_kinds / sizeof *tensor_kinds; k++)
            live += mp_replay_live(r, tensor_kinds[k]);
        if (live > best)
            best = live;
    }
    if (st == MP_OK && got < 0)
        st = err ? err->status : MP_ERR_FORMAT;
    mp_replay_destroy(r);
    *peak = best;
    return st;
}

/* The base name of a model path; zoo:NAME as is. */
static const char *model_label(const char *path)
{
    if (!path)
        return "";
    if (strncmp(path, "zoo:", 4) == 0)
        return path;
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

typedef struct keyed {
    char *key;
    int32_t index;
    uint64_t bytes;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* Per-tensor bytes from the lifetimes, keyed by unique names, sorted. */
static bool tensors_from(const mp_profile *p, mp_baseline *b)
{
    size_t n = 0;
    keyed *k = calloc(p->n_lifetimes ? p->n_lifetimes : 1, sizeof *k);
    if (!k)
        return false;
    bool ok = true;
    for (size_t i = 0; i < p->n_lifetimes && ok; i++) {
        const mp_lifetime *l = &p->lifetimes[i];
        if (l->manager == MP_MGR_NONE || l->bytes == 0)
            continue;
        char idx[32];
        snprintf(idx, sizeof idx, "#%zu", i);
        k[n].key = clean_str(l->name && l->name[0] ? l->name : idx);
        k[n].index = (int32_t)i;
        k[n].bytes = l->bytes;
        ok = k[n++].key != NULL;
    }
    if (ok)
        qsort(k, n, sizeof *k, cmp_keyed);
    /* a repeated name: every holder becomes NAME#N */
    for (size_t i = 0; i < n && ok;) {
        size_t j = i + 1;
        while (j < n && strcmp(k[j].key, k[i].key) == 0)
            j++;
        if (j - i > 1)
            for (size_t q = i; q < j && ok; q++) {
                size_t len = strlen(k[q].key) + 24;
                char *s = malloc(len);
                if (!s) {
                    ok = false;
                    break;
                }
                snprintf(s, len, "%s#%d", k[q].key, (int)k[q].index);
                free(k[q].key);
                k[q].key = s;
            }
        i = j;
    }
    if (ok) {
        qsort(k, n, sizeof *k, cmp_keyed);
        b->tensors = calloc(n ? n : 1, sizeof *b->tensors);
        ok = b->tensors != NULL;
    }
    if (ok) {
        for (size_t i = 0; i < n; i++) {
            b->tensors[i].name = k[i].key;
            b->tensors[i].bytes = k[i].bytes;
            k[i].key = NULL;
        }
        b->n_tensors = n;
    }
    for (size_t i = 0; i < n; i++)
        free(k[i].key);
    free(k);
    return ok;
}

mp_status mp_baseline_from_profile(const mp_profile *p, mp_source *src, mp_baseline *out,
                                   mp_error *err)
{
    memset(out, 0, sizeof *out);
    const mp_trace_meta *m = mp_source_meta(src);
    const mp_summary *s = &p->summary;
    out->model = clean_str(model_label(m->model));
    out->mode = clean_str(m->mode);
    out->planner = clean_str(m->planner);
    if (!out->model || !out->mode || !out->planner || !tensors_from(p, out)) {
        mp_baseline_free(out);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    mp_status st = tensor_peak(src, &out->fig[MP_FIG_TENSORS], err);
    if (st != MP_OK) {
        mp_baseline_free(out);
        return st;
    }
    out->fig[MP_FIG_STATIC] = s->kind_peak[MP_KIND_STATIC];
    out->fig[MP_FIG_DYNAMIC] = s->kind_peak[MP_KIND_DYNAMIC];
    out->fig[MP_FIG_SCRATCH] = s->kind_peak[MP_KIND_SCRATCH];
    out->fig[MP_FIG_IO] = s->kind_peak[MP_KIND_IO];
    out->fig[MP_FIG_CONST] = s->const_bytes;
    out->fig[MP_FIG_KERNEL] = s->kind_peak[MP_KIND_KERNEL];
    out->fig[MP_FIG_ENGINE] = s->kind_peak[MP_KIND_ENGINE];
    /* the heap figure counts a model held on the heap (zoo:), as the process heap does */
    out->fig[MP_FIG_HEAP] = s->peak_heap + s->model_heap;
    out->run_heap_peak = s->peak_heap;
    out->model_heap = s->model_heap;
    for (int f = MP_FIG_VARIABLE; f <= MP_FIG_EXTRA; f++)
        out->fig[f] = s->kind_peak[MP_KIND_VARIABLE + (f - MP_FIG_VARIABLE)];
    for (int f = 0; f < MP_FIG_COUNT; f++)
        out->has[f] = true;
    /* the process's high-water mark, when the trace sampled it */
    out->fig[MP_FIG_RSS] = p->rss_hwm;
    out->has[MP_FIG_RSS] = p->n_rss > 0 && p->rss_hwm > 0;
    out->truncated = s->truncated || mp_source_truncated(src);
    return MP_OK;
}

mp_status mp_baseline_compute(mp_source *src, mp_baseline *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!src)
        return mp_fail(err, MP_ERR_ARG, "no trace");
    mp_profile p;
    mp_profile_options po = {.max_points = 2, .max_arenas = 1, .max_unused = 1};
    mp_status st = mp_profile_compute(src, &po, &p, err);
    if (st == MP_OK)
        st = mp_baseline_from_profile(&p, src, out, err);
    mp_profile_free(&p);
    return st;
}

/* ---- the file ---------------------------------------------------------------------------- */

static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

char *mp_baseline_to_json(const mp_baseline *b)
{
    json_t *root = json_object(), *figs = json_object(), *model = json_object(),
           *tens = json_object();
    bool ok = root && figs && model && tens;
    for (int f = 0; f < MP_FIG_COUNT && ok; f++)
        if (b->has[f] && !mp_figure_machine_dependent(f) && (b->fig[f] || !mp_figure_optional(f)))
            ok = put(figs, fig_names[f], json_integer((json_int_t)b->fig[f]));
    ok = ok && put(model, "name", json_string(b->model ? b->model : ""));
    ok = ok && put(model, "mode", json_string(b->mode ? b->mode : ""));
    ok = ok && put(model, "planner", json_string(b->planner ? b->planner : ""));
    if (ok && b->sha256)
        ok = put(model, "sha256", json_string(b->sha256));
    if (ok && b->n_inputs) {
        json_t *in = json_object();
        ok = put(model, "inputs", in);
        for (size_t i = 0; i < b->n_inputs && ok; i++)
            ok = put(in, b->inputs[i].name, json_string(b->inputs[i].dims));
    }
    for (size_t i = 0; i < b->n_tensors && ok; i++)
        ok = put(tens, b->tensors[i].name, json_integer((json_int_t)b->tensors[i].bytes));
    char *text = NULL;
    if (ok) {
        json_object_set_new(root, "format", json_string(MP_BASELINE_FORMAT));
        json_object_set_new(root, "version", json_integer(MP_BASELINE_VERSION));
        json_object_set(root, "figure_bytes", figs);
        json_object_set(root, "model", model);
        json_object_set(root, "tensor_bytes", tens);
        if (b->truncated)
            json_object_set_new(root, "truncated", json_true());
        char *body = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (body) {
            size_t n = strlen(body);
            text = malloc(n + 2);
            if (text) {
                memcpy(text, body, n);
                text[n] = '\n';
                text[n + 1] = 0;
            }
            free(body);
        }
    }
    json_decref(figs);
    json_decref(model);
    json_decref(tens);
    json_decref(root);
    return text;
}

static bool get_u64(json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

static mp_status parse_model(json_t *model, const char *name, mp_baseline *b, mp_error *err)
{
    if (!json_is_object(model))
        return mp_fail(err, MP_ERR_FORMAT, "%s: 'model' is not an object", name);
    const char *keys[4] = {"name", "mode", "planner", "sha256"};
    char **fields[4] = {&b->model, &b->mode, &b->planner, &b->sha256};
    for (int i = 0; i < 4; i++) {
        json_t *v = json_object_get(model, keys[i]);
        if (!v && i == 3)
            continue;
        if (!json_is_string(v))
            return mp_fail(err, MP_ERR_FORMAT, "%s: model '%s' is not a string", name, keys[i]);
        if (!(*fields[i] = dup_str(json_string_value(v))))
            return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    json_t *in = json_object_get(model, "inputs");
    if (!in)
        return MP_OK;
    if (!json_is_object(in))
        return mp_fail(err, MP_ERR_FORMAT, "%s: model 'inputs' is not an object", name);
    const char *k;
    json_t *v;
    json_object_foreach(in, k, v) {
        char safe[256];
        if (!json_is_string(v))
            return mp_fail(err, MP_ERR_FORMAT, "%s: input '%s' is not a string", name,
                           mp_safe_text(safe, sizeof safe, k));
        if (!mp_baseline_add_input(b, k, json_string_value(v)))
            return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    return MP_OK;
}

static mp_status parse_root(json_t *root, const char *name, mp_baseline *b, mp_error *err)
{
    if (!json_is_object(root))
        return mp_fail(err, MP_ERR_FORMAT, "%s: not a JSON object", name);
    json_t *fmt = json_object_get(root, "format");
    if (!json_is_string(fmt) || strcmp(json_string_value(fmt), MP_BASELINE_FORMAT) != 0)
        return mp_fail(err, MP_ERR_FORMAT, "%s: not a memprof baseline (format is not '%s')",
                       name, MP_BASELINE_FORMAT);
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) < 1 ||
        json_integer_value(ver) > MP_BASELINE_VERSION)
        return mp_fail(err, MP_ERR_FORMAT, "%s: baseline version is not 1..%d", name,
                       MP_BASELINE_VERSION);
    mp_status st = parse_model(json_object_get(root, "model"), name, b, err);
    if (st != MP_OK)
        return st;
    /* version 1 named the two objects "figures" and "tensors"; versions 1 and 2 named the
     * figure tensors "peak" (and had no optional kinds) */
    json_int_t version = json_integer_value(ver);
    bool v1 = version == 1;
    const char *figs_key = v1 ? "figures" : "figure_bytes", *tens_key = v1 ? "tensors"
                                                                           : "tensor_bytes";
    json_t *figs = json_object_get(root, figs_key);
    if (!json_is_object(figs))
        return mp_fail(err, MP_ERR_FORMAT, "%s: '%s' is not an object", name, figs_key);
    const char *k;
    json_t *v;
    json_object_foreach(figs, k, v) {
        char safe[256];
        int f = version < 3 && strcmp(k, "peak") == 0 ? MP_FIG_TENSORS
                : version < 3 && strcmp(k, "tensors") == 0 ? -1
                                                          : mp_figure_parse(k);
        /* A figure of a later version is not compared; a machine-dependent one is never
         * written to a baseline (a file holding one was edited): not read either, so that
         * a baseline reads back from the file it writes as it was. */
        if (f < 0 || mp_figure_machine_dependent(f))
            continue;
        if (!get_u64(v, &b->fig[f]))
            return mp_fail(err, MP_ERR_FORMAT, "%s: figure '%s' is not a non-negative integer",
                           name, mp_safe_text(safe, sizeof safe, k));
        /* an optional kind is written only when not 0: a 0 reads as absent, as written */
        b->has[f] = b->fig[f] || !mp_figure_optional(f);
    }
    json_t *tens = json_object_get(root, tens_key);
    if (!json_is_object(tens))
        return mp_fail(err, MP_ERR_FORMAT, "%s: '%s' is not an object", name, tens_key);
    size_t n = json_object_size(tens);
    b->tensors = calloc(n ? n : 1, sizeof *b->tensors);
    if (!b->tensors)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    json_object_foreach(tens, k, v) {
        mp_baseline_tensor *t = &b->tensors[b->n_tensors];
        char safe[256];
        if (!get_u64(v, &t->bytes))
            return mp_fail(err, MP_ERR_FORMAT, "%s: tensor '%s' is not a non-negative integer",
                           name, mp_safe_text(safe, sizeof safe, k));
        if (!(t->name = dup_str(k)))
            return mp_fail(err, MP_ERR_NOMEM, "out of memory");
        b->n_tensors++;
    }
    qsort(b->tensors, b->n_tensors, sizeof *b->tensors, cmp_tensor);
    json_t *tr = json_object_get(root, "truncated");
    if (tr && !json_is_boolean(tr))
        return mp_fail(err, MP_ERR_FORMAT, "%s: 'truncated' is not a boolean", name);
    b->truncated = json_is_true(tr);
    return MP_OK;
}

mp_status mp_baseline_parse(const char *text, size_t n, const char *name, mp_baseline *out,
                            mp_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) { /* jansson's text quotes the input: escaped to stay on one line */
        char safe[MP_SAFE_TEXT_SIZE(JSON_ERROR_TEXT_LENGTH)];
        return mp_fail(err, MP_ERR_FORMAT, "%s: line %d: %s", name, je.line,
                       mp_safe_text(safe, sizeof safe, je.text));
    }
    mp_status st = parse_root(root, name, out, err);
    json_decref(root);
    if (st != MP_OK)
        mp_baseline_free(out);
    return st;
}

mp_status mp_baseline_read(const char *path, mp_baseline *out, mp_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = NULL;
    mp_status ost = mp_file_in_open(path, &f, err); /* a FIFO without writer: no hang */
    if (ost != MP_OK)
        return ost;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    mp_status st = MP_OK;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= ((size_t)256 << 20)) {
            st = mp_fail(err, MP_ERR_FORMAT, "%s: too big for a baseline", path);
            break;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    if (st == MP_OK && !buf)
        st = mp_fail(err, MP_ERR_NOMEM, "out of memory");
    if (st == MP_OK && ferror(f))
        st = mp_fail(err, MP_ERR_IO, "cannot read %s", path);
    fclose(f);
    if (st == MP_OK)
        st = mp_baseline_parse(buf, n, path, out, err);
    free(buf);
    return st;
}

/* ---- SHA-256 (FIPS 180-4) ------------------------------------------------------------------ */

static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha_block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha_k[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

/* An incremental hash: whole blocks as they come, the rest kept for later. */
typedef struct sha_ctx {
    uint32_t h[8];
    unsigned char buf[64];
    size_t n_buf;
    uint64_t total;
} sha_ctx;

static void sha_init(sha_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->n_buf = 0;
    c->total = 0;
}

static void sha_update(sha_ctx *c, const unsigned char *p, size_t n)
{
    c->total += n;
    if (c->n_buf) {
        size_t take = 64 - c->n_buf < n ? 64 - c->n_buf : n;
        memcpy(c->buf + c->n_buf, p, take);
        c->n_buf += take;
        p += take;
        n -= take;
        if (c->n_buf < 64)
            return;
        sha_block(c->h, c->buf);
        c->n_buf = 0;
    }
    for (; n >= 64; n -= 64, p += 64)
        sha_block(c->h, p);
    memcpy(c->buf, p, n);
    c->n_buf = n;
}

static void sha_final(sha_ctx *c, char out[65])
{
    unsigned char tail[128] = {0};
    size_t left = c->n_buf;
    memcpy(tail, c->buf, left);
    tail[left] = 0x80;
    size_t tn = left + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = c->total * 8;
    for (int i = 0; i < 8; i++)
        tail[tn - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha_block(c->h, tail);
    if (tn == 128)
        sha_block(c->h, tail + 64);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", c->h[i]);
}

void mp_sha256_hex(const void *data, size_t n, char out[65])
{
    sha_ctx c;
    sha_init(&c);
    sha_update(&c, data, n);
    sha_final(&c, out);
}

bool mp_sha256_file(const char *path, char out[65])
{
    FILE *f = NULL;
    if (mp_file_in_open(path, &f, NULL) != MP_OK)
        return false;
    sha_ctx c;
    sha_init(&c);
    unsigned char buf[1 << 14];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        sha_update(&c, buf, got);
    bool ok = !ferror(f);
    fclose(f);
    if (ok)
        sha_final(&c, out);
    return ok;
}

bool mp_baseline_set_sha256(mp_baseline *b, const char hex[65])
{
    free(b->sha256);
    b->sha256 = dup_str(hex);
    return b->sha256 != NULL;
}

/* ---- what a file holds ----------------------------------------------------------------- */

mp_file_kind mp_file_kind_of(const char *path)
{
    FILE *f = NULL;
    if (mp_file_in_open(path, &f, NULL) != MP_OK)
        return MP_FILE_UNREADABLE;
    char head[257];
    size_t n = fread(head, 1, sizeof head - 1, f);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad)
        return MP_FILE_UNREADABLE;
    head[n] = 0;
    if (n >= 8 && memcmp(head + 4, "TFL3", 4) == 0)
        return MP_FILE_MODEL;
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i == n || head[i] != '{')
        return MP_FILE_UNKNOWN;
    /* trace_io.c writes the format first; a compact trace has no spaces */
    const char *fmt = strstr(head, "\"format\"");
    if (fmt && fmt < head + 64) {
        const char *v = fmt + 8;
        while (*v == ' ' || *v == ':' || *v == '\n' || *v == '\t' || *v == '\r')
            v++;
        if (strncmp(v, "\"" MP_TRACE_FORMAT "\"", strlen(MP_TRACE_FORMAT) + 2) == 0)
            return MP_FILE_TRACE;
    }
    return MP_FILE_JSON;
}
