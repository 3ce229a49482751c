/* Baseline: the figures a CI memory gate compares (memprof check, memprof diff), extracted
 * from a trace, and their small JSON file (format memprof-baseline, version 3; version 1
 * files, whose objects were named "figures" and "tensors", and version 2 files, whose
 * figure "tensors" was named "peak", are still read).
 *
 * Figures are deterministic: the same model, shapes and options give the same bytes on every
 * run, thread count and machine. Nothing about time, addresses, event counts or the host is
 * kept. Figures (bytes):
 *   tensors  the most tensor memory live at once: static + dynamic + scratch + io, and a
 *            training step's activation + backprop + gradient + disposable + extra, together
 *            (what the memory manager decides; the default gated figure; named "peak" in
 *            baselines of versions 1 and 2)
 *   static, dynamic, scratch, io   each kind's own peak (summary.h kind_peak)
 *   const    model constants mapped from the file (not heap)
 *   kernel   XNNPACK's packed weights and indirection buffers (own peak)
 *   engine   engine bookkeeping: model tables, plans (own peak)
 *   heap     the heap peak of every kind together (summary.h peak_heap, memprof run's "Heap
 *            peak"), plus the model's bytes when the caller holds them on the heap (zoo:)
 *   variable, activation, trainable, backprop, gradient, optimizer, disposable, extra
 *            each kind's own peak (recurrent state; memprof train's categories, a planned
 *            slot counted as its category while its operators run: replay.h)
 *   rss      the process's peak resident set (VmHWM) sampled in the trace; known only when
 *            the trace has RSS samples (memprof run, memprof check of a model)
 * kernel, engine, heap and rss are machine dependent: XNNPACK packs weights in tiles of its
 * kernels' width, which depends on the CPU's instruction set, and the engine's bookkeeping
 * follows it. They are measured (for limits, --max kernel=SIZE) but never written to a
 * baseline file, so that a baseline is the same file on every machine. The kinds from
 * variable to extra are "optional": written to a baseline only when not 0 (a 0 in a file
 * reads as absent), so compared with a baseline only when it had some.
 *
 * Per tensor: the bytes of every tensor held in the reference run (profile.h lifetimes),
 * keyed by name ("#N" for an unnamed tensor, "NAME#N" for a repeated name). */
#ifndef MP_BASELINE_H
#define MP_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/profile.h"
#include "analyzers/source.h"
#include "trace/status.h"

#define MP_BASELINE_FORMAT "memprof-baseline"
#define MP_BASELINE_VERSION 3

typedef enum mp_figure {
    MP_FIG_TENSORS = 0,
    MP_FIG_STATIC,
    MP_FIG_DYNAMIC,
    MP_FIG_SCRATCH,
    MP_FIG_IO,
    MP_FIG_CONST,
    MP_FIG_KERNEL,
    MP_FIG_ENGINE,
    MP_FIG_HEAP,
    MP_FIG_VARIABLE, /* optional kinds: variable .. extra */
    MP_FIG_ACTIVATION,
    MP_FIG_TRAINABLE,
    MP_FIG_BACKPROP,
    MP_FIG_GRADIENT,
    MP_FIG_OPTIMIZER,
    MP_FIG_DISPOSABLE,
    MP_FIG_EXTRA,
    MP_FIG_RSS,
    MP_FIG_COUNT
} mp_figure;

/* "tensors", "static", ... ; NULL out of range. */
const char *mp_figure_name(int f);
/* The figure named s (case-sensitive), -1 when unknown. "peak", the name of tensors until
 * baseline version 3 and memprof check --max-peak's figure, is not a name: callers that
 * accept it (deprecated) say so. */
int mp_figure_parse(const char *s);
/* kernel, engine, heap, rss: not the same on every machine, never written to a baseline. */
bool mp_figure_machine_dependent(int f);
/* variable .. extra: written and compared only when not 0 (see above). */
bool mp_figure_optional(int f);
/* Compared against a baseline by default: tensors, static, dynamic, scratch, io, and the
 * optional kinds (when the baseline has them: it has only those not 0). */
bool mp_figure_gated_by_default(int f);


typedef struct mp_baseline_tensor {
    char *name;
    uint64_t bytes;
} mp_baseline_tensor;

typedef struct mp_baseline_input {
    char *name;
    char *dims;                   /* "1,224,224,3" */
} mp_baseline_input;

typedef struct mp_baseline {
    /* identity (informative: compared figures do not depend on it) */
    char *model;                  /* zoo:NAME, or the model file's base name */
    char *sha256;                 /* of the model file, hex; NULL when unknown (a trace) */
    char *mode, *planner;         /* memory mode and planner */
    size_t n_inputs;
    mp_baseline_input *inputs;    /* input shapes when known (a model run), else none */
    /* figures */
    bool has[MP_FIG_COUNT];       /* known (a file lacks the machine-dependent ones) */
    uint64_t fig[MP_FIG_COUNT];
    size_t n_tensors;
    mp_baseline_tensor *tensors;  /* sorted by name (byte order), names unique */
    bool truncated;               /* computed from a truncated trace: figures are partial */
    /* of a trace (not written to a file): the heap figure's parts, memprof run's "Heap
     * peak" and the model's bytes held on the heap by the caller (0 for a mapped file) */
    uint64_t run_heap_peak, model_heap;
} mp_baseline;

/* Compute the baseline of the events of src (passes rewind it): the profile, then one replay
 * for the tensor-memory peak. On error *out is left empty (safe to free). */
mp_status mp_baseline_compute(mp_source *src, mp_baseline *out, mp_error *err);
/* The same from a profile already computed over src (one more pass over src). */
mp_status mp_baseline_from_profile(const mp_profile *p, mp_source *src, mp_baseline *out,
                                   mp_error *err);
void mp_baseline_free(mp_baseline *b);

/* Identity setters (copy their arguments; false when out of memory). */
bool mp_baseline_set_sha256(mp_baseline *b, const char hex[65]);
/* Adds an input, keeping b->inputs in name order (a baseline file's order). */
bool mp_baseline_add_input(mp_baseline *b, const char *name, const char *dims);

/* The tensor named name, or NULL (binary search). */
const mp_baseline_tensor *mp_baseline_find(const mp_baseline *b, const char *name);

/* The baseline file: JSON with sorted keys and one figure per line, ending with a newline;
 * machine-dependent figures left out. malloc'd; NULL when out of memory. */
char *mp_baseline_to_json(const mp_baseline *b);
/* Read a baseline file (MP_ERR_IO when unreadable, MP_ERR_FORMAT naming what is wrong). */
mp_status mp_baseline_read(const char *path, mp_baseline *out, mp_error *err);
/* Parse a baseline from text (name: for messages). */
mp_status mp_baseline_parse(const char *text, size_t n, const char *name, mp_baseline *out,
                            mp_error *err);

/* What a file holds, judged by its first bytes: a .tflite model (identifier "TFL3" at
 * offset 4), a saved trace (JSON beginning with format "memprof-trace"), another JSON
 * document (a baseline, when it parses as one), or unknown. MP_FILE_UNREADABLE when the file
 * cannot be opened or read. */
typedef enum mp_file_kind {
    MP_FILE_UNREADABLE = -1,
    MP_FILE_UNKNOWN = 0,
    MP_FILE_MODEL,
    MP_FILE_TRACE,
    MP_FILE_JSON
} mp_file_kind;
mp_file_kind mp_file_kind_of(const char *path);

/* SHA-256 of n bytes, or of a file's contents (read in blocks; false when it cannot be
 * read), as 64 lowercase hex digits and a terminating zero. */
void mp_sha256_hex(const void *data, size_t n, char out[65]);
bool mp_sha256_file(const char *path, char out[65]);

#endif
