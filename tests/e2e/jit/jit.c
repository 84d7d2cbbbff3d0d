/* The cg-inject test JIT and, built with -DCGJIT_TWIN, its ahead-of-time twin.
   The JIT emits emit.c's code into an RWX mapping at CGJIT_CODE_ADDR, flushes the icache, and
   describes it in a perf map (perf-PID.map) and a jitdump (jit-PID.dump, with the marker mmap
   that perf needs). The twin runs the same workload on the same bytes linked as ELF functions.
     jit  [--out DIR] [--dump-at-reuse] [--start-in-helper]
     twin [--dump-at-reuse] [--start-in-helper]
   --out DIR: where the perf map and the jitdump go (default: /tmp for the map, . for the dump).
   --dump-at-reuse: CALLGRIND_DUMP_STATS_AT("reuse") before jit_reuse_v2 replaces jit_reuse_v1.
   --start-in-helper: CALLGRIND_START_INSTRUMENTATION inside c_apply (run with
   --instr-atstart=no). */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include "cgjit.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static void Die(const char *what) {
  perror(what);
  exit(1);
}

static void *MapAt(uintptr_t addr, size_t size, int prot) {
  void *p = mmap((void *)addr, size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) Die("mmap");
  if ((uintptr_t)p != addr) { /* a kernel or Valgrind that ignores the flag took it as a hint */
    fprintf(stderr, "mmap: wanted %#lx, got %p\n", (unsigned long)addr, p);
    exit(1);
  }
  return p;
}

static int64_t Call(int slot, int64_t n) { return ((cgjit_fn)CGJIT_TABLE[slot])(n); }

#ifdef CGJIT_TWIN
extern char jit_fib[], jit_sum[], jit_square[], jit_cb[], jit_tail_a[], jit_tail_b[], jit_tail_c[],
    jit_moved[], jit_reuse_v1[], jit_reuse_v2[];

static void Load(void) {
  void *volatile *t = CGJIT_TABLE;
  t[SLOT_FIB] = jit_fib, t[SLOT_SUM] = jit_sum, t[SLOT_SQUARE] = jit_square, t[SLOT_CB] = jit_cb;
  t[SLOT_TAIL_A] = jit_tail_a, t[SLOT_TAIL_B] = jit_tail_b, t[SLOT_TAIL_C] = jit_tail_c;
  t[SLOT_MOVED] = jit_moved, t[SLOT_REUSE_V1] = jit_reuse_v1, t[SLOT_REUSE_V2] = jit_reuse_v2;
}
static void Move(void) {}
static void Reuse(void) {}
static void Close(void) {}
static void ParseOut(const char *dir) { (void)dir; }
#else

#if defined(__x86_64__)
#define ARCH CGJIT_X86_64
#define ELF_MACH EM_X86_64
#define TRAP_BYTE 0xcc /* int3 */
#elif defined(__aarch64__)
#define ARCH CGJIT_AARCH64
#define ELF_MACH EM_AARCH64
#define TRAP_BYTE 0x00 /* udf #0 */
#else
#error "the test JIT supports x86-64 and AArch64"
#endif

static struct cgjit_prog prog;
static uint8_t *code;
static FILE *perf_map;
static FILE *jitdump;
static uint64_t code_index;
static const char *out_dir;
static const char kSourceName[] = "tests/e2e/jit/workload.mini";

static uint64_t Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static void Put(const void *p, size_t n) {
  if (fwrite(p, 1, n, jitdump) != n) Die("jitdump");
}
static void Put32(uint32_t v) { Put(&v, 4); }
static void Put64(uint64_t v) { Put(&v, 8); }
static void RecordHeader(uint32_t id, uint32_t total_size) {
  Put32(id), Put32(total_size), Put64(Now());
}

static void OpenSinks(void) {
  char path[4096];
  int pid = getpid();
  snprintf(path, sizeof path, "%s/perf-%d.map", out_dir ? out_dir : "/tmp", pid);
  if (!(perf_map = fopen(path, "w"))) Die(path);
  snprintf(path, sizeof path, "%s/jit-%d.dump", out_dir ? out_dir : ".", pid);
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0 || !(jitdump = fdopen(fd, "w+"))) Die(path);
  /* perf finds the dump through this executable mapping of it in the recorded mmap events. */
  if (mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
      MAP_FAILED)
    Die("mmap jitdump");
  Put32(0x4A695444), Put32(1), Put32(40), Put32(ELF_MACH), Put32(0), Put32((uint32_t)pid);
  Put64(Now()), Put64(0);
}

/* Copies function F to ADDR and announces it: DEBUG_INFO, then CODE_LOAD, then the perf map. */
static void Install(const struct cgjit_func *f, uint8_t *addr) {
  memcpy(addr, &prog.blob[f->blob][f->off], f->size);
  __builtin___clear_cache((char *)addr, (char *)addr + f->size);
  uint64_t vma = (uint64_t)(uintptr_t)addr;
  uint32_t size = 16 + 16;
  for (int i = 0; i < f->nlines; i++) size += 16 + (uint32_t)sizeof kSourceName;
  RecordHeader(2, size);
  Put64(vma), Put64((uint64_t)f->nlines);
  for (int i = 0; i < f->nlines; i++) {
    Put64(vma + f->lines[i].off), Put32(f->lines[i].line), Put32(0);
    Put(kSourceName, sizeof kSourceName);
  }
  size_t name_len = strlen(f->name) + 1;
  RecordHeader(0, (uint32_t)(16 + 40 + name_len + f->size));
  Put32((uint32_t)getpid()), Put32((uint32_t)syscall(SYS_gettid));
  Put64(vma), Put64(vma), Put64(f->size), Put64(code_index++);
  Put(f->name, name_len), Put(addr, f->size);
  fprintf(perf_map, "%lx %x %s\n", (unsigned long)vma, f->size, f->name);
  fflush(perf_map), fflush(jitdump);
  CGJIT_TABLE[f->slot] = addr;
}

static const struct cgjit_func *Func(int slot) {
  for (int i = 0; i < prog.nfuncs; i++)
    if (prog.funcs[i].slot == slot) return &prog.funcs[i];
  abort();
}

static uint64_t moved_index;

static void Load(void) {
  cgjit_emit(ARCH, &prog);
  code = MapAt(CGJIT_CODE_ADDR, 0x4000, PROT_READ | PROT_WRITE | PROT_EXEC);
  OpenSinks();
  for (int i = 0; i < prog.nfuncs; i++) {
    const struct cgjit_func *f = &prog.funcs[i];
    if (f->blob == BLOB_MAIN) Install(f, code + f->off);
  }
  moved_index = code_index;
  Install(Func(SLOT_MOVED), code + CGJIT_MOVED_OLD_OFF);
  Install(Func(SLOT_REUSE_V1), code + CGJIT_REUSE_OFF);
}

/* Moves jit_moved: copy, CODE_MOVE (same code_index, same size), perf map line for the new
   address, then overwrite the old bytes with traps so stale use would crash. */
static void Move(void) {
  const struct cgjit_func *f = Func(SLOT_MOVED);
  uint8_t *from = code + CGJIT_MOVED_OLD_OFF, *to = code + CGJIT_MOVED_NEW_OFF;
  memcpy(to, from, f->size);
  __builtin___clear_cache((char *)to, (char *)to + f->size);
  RecordHeader(1, 16 + 8 + 40); /* pid, tid; vma, old, new, size, index */
  Put32((uint32_t)getpid()), Put32((uint32_t)syscall(SYS_gettid));
  Put64((uint64_t)(uintptr_t)to), Put64((uint64_t)(uintptr_t)from), Put64((uint64_t)(uintptr_t)to);
  Put64(f->size), Put64(moved_index);
  fprintf(perf_map, "%lx %x %s\n", (unsigned long)(uintptr_t)to, f->size, f->name);
  fflush(perf_map), fflush(jitdump);
  CGJIT_TABLE[SLOT_MOVED] = to;
  memset(from, TRAP_BYTE, f->size);
  __builtin___clear_cache((char *)from, (char *)from + f->size);
}

/* Frees jit_reuse_v1 and emits jit_reuse_v2 at the same address (a new CODE_LOAD). */
static void Reuse(void) {
  const struct cgjit_func *v1 = Func(SLOT_REUSE_V1);
  memset(code + CGJIT_REUSE_OFF, TRAP_BYTE, v1->size);
  Install(Func(SLOT_REUSE_V2), code + CGJIT_REUSE_OFF);
}

static void Close(void) {
  RecordHeader(3, 16);
  fclose(jitdump), fclose(perf_map);
}
static void ParseOut(const char *dir) { out_dir = dir; }
#endif

/* Both workers wait here before running JIT code: both exist at once, so Valgrind gives them
   distinct thread ids (2 and 3, in creation order) and --separate-threads=yes files are stable. */
static pthread_barrier_t barrier;

static void *Thread(void *arg) {
  int64_t *result = arg;
  pthread_barrier_wait(&barrier);
  *result = Call(SLOT_SUM, 10) + Call(SLOT_FIB, 6);
  return NULL;
}

int main(int argc, char **argv) {
  int dump_at_reuse = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dump-at-reuse")) {
      dump_at_reuse = 1;
    } else if (!strcmp(argv[i], "--start-in-helper")) {
      cgjit_start_instr_in_helper = 1;
    } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
      ParseOut(argv[++i]);
    } else {
      fprintf(stderr, "%s: unknown option '%s'\n", argv[0], argv[i]);
      return 2;
    }
  }
  MapAt(CGJIT_TABLE_ADDR, 0x1000, PROT_READ | PROT_WRITE);
  CGJIT_TABLE[SLOT_C_APPLY] = (void *)c_apply;
  CGJIT_TABLE[SLOT_C_LEAF] = (void *)c_leaf;
  Load();

  int64_t r = 0;
  r += Call(SLOT_CB, 5); /* first: with --start-in-helper, instrumentation starts in here */
  r += Call(SLOT_FIB, 10);
  r += Call(SLOT_SUM, 20);
  r += Call(SLOT_TAIL_A, 10);
  r += Call(SLOT_TAIL_C, 10);
  r += Call(SLOT_MOVED, 10);
  Move();
  r += Call(SLOT_MOVED, 12);
  r += Call(SLOT_REUSE_V1, 3);
  if (dump_at_reuse) CALLGRIND_DUMP_STATS_AT("reuse");
  Reuse();
  r += Call(SLOT_REUSE_V2, 3);

  pthread_t threads[2];
  int64_t results[2];
  pthread_barrier_init(&barrier, NULL, 2);
  for (int i = 0; i < 2; i++)
    if (pthread_create(&threads[i], NULL, Thread, &results[i])) Die("pthread_create");
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL), r += results[i];
  Close();
  printf("result %lld\n", (long long)r);
  return 0;
}
