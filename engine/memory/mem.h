/* The engine's one allocation interface.
 *
 * Every buffer the engine needs (tensor storage, kernel scratch, packed or dequantized
 * weights, bookkeeping) is requested here with its kind of memory and its owner, never
 * with a bare malloc. An mp_mem keeps running totals (live bytes, peak, allocation
 * counts) per kind and records each call into the session's trace (engine/trace.h). */
#ifndef MP_MEM_H
#define MP_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mp_mem_kind {
    MP_MEM_CONST = 0, /* weights mapped from the model file (counted as mapped, not heap) */
    MP_MEM_STATIC,    /* planned arenas */
    MP_MEM_DYNAMIC,   /* per-tensor buffers allocated while running */
    MP_MEM_SCRATCH,   /* kernel temporaries */
    MP_MEM_KERNEL,    /* kernel-internal: XNNPACK allocations, packed/dequantized weights */
    MP_MEM_IO,        /* input/output buffers and copies */
    MP_MEM_ENGINE,    /* graph, plans, bookkeeping */
    MP_MEM_VARIABLE,  /* variable tensors (LSTM state): kept across runs, reset on request */
    /* training categories (engine/train/train.h) */
    MP_MEM_TRAIN_ACTIVATION,
    MP_MEM_TRAIN_TRAINABLE,
    MP_MEM_TRAIN_BACKPROP,
    MP_MEM_TRAIN_GRADIENT,
    MP_MEM_TRAIN_OPTIMIZER,
    MP_MEM_TRAIN_DISPOSABLE,
    MP_MEM_TRAIN_EXTRA,
    MP_MEM_KIND_COUNT
} mp_mem_kind;

/* Who a buffer belongs to: a tensor index, an operator index, or neither (-1). */
typedef struct mp_owner {
    int32_t tensor;
    int32_t op;
} mp_owner;

#define MP_OWNER_NONE ((mp_owner){-1, -1})
#define MP_OWNER_TENSOR(t) ((mp_owner){(t), -1})
#define MP_OWNER_OP(o) ((mp_owner){-1, (o)})

typedef struct mp_mem_stats {
    uint64_t live[MP_MEM_KIND_COUNT];   /* bytes currently allocated per kind */
    uint64_t peak[MP_MEM_KIND_COUNT];   /* high-water mark per kind */
    uint64_t live_total, peak_total;    /* over all heap kinds */
    uint64_t n_alloc, n_free, n_realloc;/* calls */
    uint64_t bytes_alloc, bytes_free;   /* cumulative (a realloc counts its new and old size) */
    uint64_t slack_at_peak;             /* headers and alignment room malloc held at peak_total */
} mp_mem_stats;

typedef struct mp_mem mp_mem;
typedef struct mp_trace mp_trace;

/* Default alignment of engine buffers: a cache line (also what XNNPACK prefers). */
#define MP_MEM_ALIGN 64

mp_mem *mp_mem_create(void);
/* Refuse (return NULL for) any single allocation larger than `bytes` (0 = no limit): a
 * malformed model cannot make the engine or XNNPACK ask the system for absurd amounts.
 * Arenas (MP_MEM_STATIC) are exempt: they hold many tensors, each checked on its own. */
void mp_mem_set_max_alloc(mp_mem *m, size_t bytes);
void mp_mem_destroy(mp_mem *m);
/* Record every allocation, free and reallocation into tr from now on (NULL = stop). */
void mp_mem_set_trace(mp_mem *m, mp_trace *tr);
mp_trace *mp_mem_trace(const mp_mem *m);

/* Allocate `bytes` (0 allowed: returns a valid unique pointer) aligned to `align`
 * (a power of two; 0 means MP_MEM_ALIGN). Returns NULL when out of memory. */
void *mp_mem_alloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner);
/* A block that lives as long as a prepared session (the planned arena, XNNPACK's packed
 * weights): one of MP_MEM_HUGE_MIN bytes or more comes from the huge-page pool
 * (huge_pool.h) unless mp_mem_set_huge_pages turned it off; otherwise as mp_mem_alloc. */
#define MP_MEM_HUGE_MIN ((size_t)64 << 10)
void *mp_mem_alloc_long(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner);
/* Long-lived blocks on transparent huge pages (the default) or from malloc. */
void mp_mem_set_huge_pages(mp_mem *m, bool on);
/* Zero-filled variant. */
void *mp_mem_calloc(mp_mem *m, size_t bytes, size_t align, mp_mem_kind kind, mp_owner owner);
/* Resize keeping contents (alignment and kind of the original). NULL ptr = alloc. */
void *mp_mem_realloc(mp_mem *m, void *ptr, size_t bytes, mp_mem_kind kind, mp_owner owner);
/* Free a buffer from mp_mem_alloc (NULL is a no-op). */
void mp_mem_free(mp_mem *m, void *ptr);
/* Bytes originally requested for a live buffer. */
size_t mp_mem_size(const void *ptr);
/* The block's id in the trace (0 for NULL or a block allocated without an mp_mem). */
uint64_t mp_mem_block_id(const void *ptr);

/* Record a loaded model: its constants, used in place from a mapping (kind const, not
 * heap), and the heap its own tables hold (kind engine), which the model's reader takes
 * from malloc before any session exists. And their release when the model is freed. */
void mp_mem_note_model(mp_mem *m, uint64_t mapped_bytes, uint64_t heap_bytes);
void mp_mem_note_model_freed(mp_mem *m);

const mp_mem_stats *mp_mem_get_stats(const mp_mem *m);
const char *mp_mem_kind_name(mp_mem_kind kind);

/* XNNPACK is process-global: its allocator hook forwards to the mp_mem made current
 * here (and attributes to `op`). mp_mem_xnn_init() calls xnn_initialize until it succeeds
 * and returns its status (an enum xnn_status: 0 = success). */
int mp_mem_xnn_init(void);
void mp_mem_set_current(mp_mem *m, int32_t op);

/* ---- capture hook for peers/ (another runtime measured next to ours) ----------------
 * While `to` is set, every XNNPACK allocation, reallocation and free goes to its callbacks
 * instead of the engine's accounting; NULL restores the accounting. The caller must free
 * every block it captured inside such a window (XNNPACK objects made while redirected are
 * deleted while redirected). Process-global, like the hook itself: one thread at a time. */
struct xnn_allocator;
void mp_mem_xnn_redirect(const struct xnn_allocator *to);

/* ---- allocation-failure injection (tests only, never in normal use) ------------------
 * Makes allocations fail on purpose, to test every out-of-memory path. What is counted:
 * every mp_mem_alloc / _long / _calloc / _realloc (XNNPACK's allocations through the hook
 * included), the allocator's own bookkeeping (mp_mem_create), and allocators outside this
 * file that ask mp_mem_fail_now() first (the session's handle, the XNNPACK peer's capture
 * and buffers). One process-wide count, in call order; a refused allocation counts too.
 *
 * Environment, read once, at the first counted allocation:
 *   MP_FAIL_ALLOC=N        fail only the Nth allocation (1 = the first); later ones succeed
 *   MP_FAIL_ALLOC=N+       fail the Nth allocation and every later one (memory stays out)
 *   MP_FAIL_ALLOC=count    fail nothing; at exit print "mp_fail_alloc: count C bytes B" to
 *                          stderr (C allocations, B bytes requested), the range to sweep
 *   MP_FAIL_ALLOC_BYTES=B  fail the first allocation that would take the bytes granted so
 *                          far past B, and every later one
 * Both variables may be set together: an allocation fails when either says so.
 * Unset or empty: nothing is injected and nothing is counted beyond one relaxed check.
 * A malformed value is reported on stderr once and ignored. Tests call mp_mem_fail_set. */
typedef struct mp_mem_fail {
    uint64_t nth;        /* fail the nth allocation counted from now (1 = the next); 0 = none */
    bool and_later;      /* and every allocation after it */
    uint64_t max_bytes;  /* fail from the allocation that takes the bytes granted past this on;
                          * 0 = no limit */
} mp_mem_fail;
/* Replace the environment's setting and restart both counts (NULL = inject nothing). */
void mp_mem_fail_set(const mp_mem_fail *f);
/* Allocations counted (and bytes granted) since the setting began. */
uint64_t mp_mem_fail_count(void);
uint64_t mp_mem_fail_bytes(void);
/* Count an allocation of `bytes` made outside this file and say whether it must fail (the
 * caller then behaves exactly as if its allocator had returned NULL). */
bool mp_mem_fail_now(size_t bytes);

#endif
