/* Shared by the call-graph fixtures (README.md): functions the compiler must keep as they are
 * written (no inlining, no cloning, no interprocedural shortcuts), a sink that keeps results
 * alive, and the measured region (Callgrind runs with --instr-atstart=no). */
#ifndef FIXTURE_H
#define FIXTURE_H
#include <valgrind/callgrind.h>

#define KEEP __attribute__((noinline, noipa))
extern volatile long sink;
#define BEGIN() CALLGRIND_START_INSTRUMENTATION
#define END() CALLGRIND_STOP_INSTRUMENTATION
#endif
