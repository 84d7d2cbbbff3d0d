/* The cg-inject test JIT: shared definitions of the JIT (jit.c), its ahead-of-time twin (the same
   driver built with -DCGJIT_TWIN and the code from twin_gen) and the C helpers (helpers.c).
   Generated code calls other functions only through a table of pointers at a fixed address, so
   the same bytes run in the JIT and in the twin; only tail_a -> tail_b is a direct relative jump,
   which holds because both lay the main block out identically. */
#ifndef CGJIT_H
#define CGJIT_H

#include <stdint.h>

#define CGJIT_TABLE_ADDR 0x5a000000UL /* one page of function pointers, same in JIT and twin */
#define CGJIT_CODE_ADDR 0x5b000000UL  /* the JIT's code region (fixed hint, 4 pages) */
#define CGJIT_MOVED_OLD_OFF 0x1000    /* jit_moved before its move ... */
#define CGJIT_MOVED_NEW_OFF 0x2000    /* ... and after */
#define CGJIT_REUSE_OFF 0x3000        /* jit_reuse_v1, then jit_reuse_v2 at the same address */

enum cgjit_slot {
  SLOT_FIB,
  SLOT_SUM,
  SLOT_SQUARE,
  SLOT_CB,
  SLOT_TAIL_A,
  SLOT_TAIL_B,
  SLOT_TAIL_C,
  SLOT_MOVED,
  SLOT_REUSE_V1,
  SLOT_REUSE_V2,
  SLOT_C_APPLY, /* helpers.c: int64_t c_apply(int64_t n, int64_t slot) */
  SLOT_C_LEAF,  /* helpers.c: int64_t c_leaf(int64_t n) */
  NUM_SLOTS
};

enum cgjit_arch { CGJIT_X86_64, CGJIT_AARCH64 };

/* Where a function's bytes live: the main block (laid out contiguously, 16-byte aligned
   functions) or a blob of its own. */
enum cgjit_blob { BLOB_MAIN, BLOB_MOVED, BLOB_REUSE_V1, BLOB_REUSE_V2, NUM_BLOBS };

struct cgjit_line {
  uint32_t off;  /* offset in the function */
  uint32_t line; /* line in workload.mini */
};

struct cgjit_func {
  const char* name;
  int slot;
  int blob;
  uint32_t off; /* offset in its blob */
  uint32_t size;
  int nlines;
  struct cgjit_line lines[24];
};

struct cgjit_prog {
  uint8_t blob[NUM_BLOBS][512];
  uint32_t blob_size[NUM_BLOBS];
  int nfuncs;
  struct cgjit_func funcs[NUM_SLOTS];
};

/* Emits every function for ARCH. Deterministic: the bytes depend only on ARCH. */
void cgjit_emit(enum cgjit_arch arch, struct cgjit_prog* prog);

typedef int64_t (*cgjit_fn)(int64_t);
#define CGJIT_TABLE ((void* volatile*)CGJIT_TABLE_ADDR)

/* helpers.c (a shared library, so that --obj-skip can skip it). */
int64_t c_apply(int64_t n, int64_t slot);
int64_t c_leaf(int64_t n);
extern int cgjit_start_instr_in_helper;

#endif
