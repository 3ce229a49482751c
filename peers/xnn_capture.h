/* Capture of XNNPACK's allocations for a peer runtime (private to peers/).
 *
 * An mp_xc_capture is an xnn_allocator whose blocks carry a small header: size, the phase they
 * were made in (subgraph building, runtime creation, setup, runs, deletion), whether XNNPACK
 * asked for aligned ("SIMD") memory, and a sequence number. Live blocks are kept on a list
 * so that they can be classified after the runtime is created (xnn_runtime.c). Installed
 * through mp_mem_xnn_redirect() (engine/memory/mem.h) only around the peer's own XNNPACK
 * calls, so the engine's accounting never sees them. */
#ifndef MP_PEERS_XNN_CAPTURE_H
#define MP_PEERS_XNN_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xnnpack.h>

typedef enum mp_xc_phase {
    MP_XC_BUILD = 0, /* xnn_create_subgraph and xnn_define_* */
    MP_XC_CREATE,    /* xnn_create_runtime_v2, and the subgraph's deletion right after it */
    MP_XC_SETUP,     /* xnn_setup_runtime */
    MP_XC_RUN,       /* xnn_invoke_runtime */
    MP_XC_DELETE,    /* xnn_delete_runtime */
    MP_XC_PHASE_COUNT
} mp_xc_phase;

typedef struct mp_xc_block {
    struct mp_xc_block *prev, *next; /* live list */
    size_t bytes;
    uint64_t seq;                 /* allocation order (a reallocation gets a new one) */
    uint32_t magic;
    uint32_t shift;               /* user pointer - raw pointer */
    uint32_t align;
    uint8_t phase;
    uint8_t aligned;              /* came from aligned_allocate */
    uint8_t reserved;             /* carved from the reserve, not malloc */
} mp_xc_block;

typedef struct mp_xc_capture {
    struct xnn_allocator alloc;   /* context = this capture */
    mp_xc_block live;                /* sentinel of the live list */
    mp_xc_phase phase;
    uint64_t seq;
    uint64_t live_bytes, peak_bytes;
    uint64_t n_live;
    uint64_t n_alloc, n_free, n_realloc;
    uint64_t bytes_alloc, bytes_free;       /* a reallocation counts its new and old size */
    uint64_t phase_allocs[MP_XC_PHASE_COUNT];  /* allocations (and reallocations) per phase */
    uint64_t phase_bytes[MP_XC_PHASE_COUNT];
    uint64_t failures;                      /* allocations refused (out of memory) */
    /* The reserve (mp_xc_reserve): plain blocks malloc refused, carved by a cursor. */
    char *reserve;
    size_t reserve_cap, reserve_used;
    uint64_t reserve_live;                  /* its blocks still alive */
} mp_xc_capture;

/* The peer's own buffers (not XNNPACK's): calloc, realloc, and zeroed memory of `bytes`
 * rounded up to `align`, each refused like any allocation under the engine's failure
 * injection (mp_mem_fail_now, engine/memory/mem.h). Freed with free(). */
void *mp_xc_calloc(size_t n, size_t size);
void *mp_xc_realloc(void *p, size_t bytes);
void *mp_xc_aligned_zero(size_t align, size_t bytes);

void mp_xc_init(mp_xc_capture *c);
/* XNNPACK (2022-02) does not check every allocation of xnn_create_runtime_v2: its memory
 * planner writes through the value-usage tables it asked for even when they are NULL. Around
 * that call the peer holds a reserve of `bytes` taken beforehand, from which a plain (not
 * aligned) allocation that malloc refuses is served instead, so that running out of memory
 * there ends in a status, not a crash. False (out of memory) when the reserve itself cannot
 * be had. mp_xc_unreserve gives it back once none of its blocks is alive (at the latest,
 * mp_xc_unreserve after the runtime's deletion). */
bool mp_xc_reserve(mp_xc_capture *c, size_t bytes);
void mp_xc_unreserve(mp_xc_capture *c);
/* Route XNNPACK's allocations to c from now on, in phase `phase` (NULL: back to the
 * engine's accounting). */
void mp_xc_begin(mp_xc_capture *c, mp_xc_phase phase);
void mp_xc_end(void);
/* Iterate live blocks in allocation order: first, then next until NULL. */
const mp_xc_block *mp_xc_first(const mp_xc_capture *c);
const mp_xc_block *mp_xc_next(const mp_xc_capture *c, const mp_xc_block *b);
/* Size of xnn_operator objects of this XNNPACK build, measured once by creating a clamp
 * operator under a capture (0 when it could not be told: one aligned block was expected).
 * *aligned says whether XNNPACK allocates them aligned. */
size_t mp_xc_operator_size(bool *aligned);

#endif
