// Measures loading 1,000,000 JIT symbols into a SymbolIndex (as a perf map, and as ready-made
// versions) and looking addresses up. Prints min/max/avg over several runs, like ninja's
// build_log_perftest.
//
//   ninja -C build bench/symbol_index_perftest && build/bench/symbol_index_perftest
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cg_inject/diagnostics.h"
#include "cg_inject/symbols.h"
#include "resolve/version_chooser.h"
#include "sources/perf_map.h"

namespace {

using cg_inject::CodeVersion;
using cg_inject::Diagnostics;
using cg_inject::SymbolIndex;

constexpr int kSymbols = 1000000;
constexpr int kLookups = 1000000;
constexpr int kRuns = 5;

// A perf map like V8 writes for a big app: functions packed in a code space, a tenth of them
// recompiled (a second, later entry at a new address), names with a file and line.
std::string MakePerfMap(std::vector<uint64_t>* starts) {
  std::mt19937_64 random(1);
  std::string map;
  map.reserve(kSymbols * 64);
  uint64_t addr = 0x7f0000000000;
  char line[160];
  for (int i = 0; i < kSymbols; ++i) {
    uint64_t size = 16 + random() % 2000;
    const char* tier = random() % 10 == 0 ? "*" : "~";
    int n = std::snprintf(line, sizeof line,
                          "%" PRIx64 " %" PRIx64
                          " LazyCompile:%sfunction_%d /app/src/module_%d.js:%d\n",
                          addr, size, tier, i, i % 5000, 1 + i % 3000);
    map.append(line, static_cast<size_t>(n));
    starts->push_back(addr);
    addr += size + random() % 64;
  }
  return map;
}

// Wall time and this thread's CPU time: on a shared machine the CPU time is the steadier one.
struct Sample {
  double wall_ms, cpu_ms;
};

struct Timing {
  double min_ms = 1e300, max_ms = 0, total_ms = 0, min_cpu_ms = 1e300;
  void Add(Sample sample) {
    min_ms = std::min(min_ms, sample.wall_ms);
    max_ms = std::max(max_ms, sample.wall_ms);
    total_ms += sample.wall_ms;
    min_cpu_ms = std::min(min_cpu_ms, sample.cpu_ms);
  }
  void Print(const char* what, int runs) const {
    std::printf("%-40s wall min %7.1f max %7.1f avg %7.1f ms, cpu min %7.1f ms\n", what, min_ms,
                max_ms, total_ms / runs, min_cpu_ms);
  }
};

double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

Sample TimeMs(const std::function<void()>& work) {
  auto start = std::chrono::steady_clock::now();
  double cpu_start = CpuMs();
  work();
  double cpu = CpuMs() - cpu_start;
  return {
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
      cpu};
}

}  // namespace

int main() {
  std::vector<uint64_t> starts;
  const std::string map = MakePerfMap(&starts);
  std::printf("%d symbols, perf map of %.1f MB\n", kSymbols, map.size() / 1e6);

  std::mt19937_64 random(2);
  std::vector<uint64_t> queries;
  for (int i = 0; i < kLookups; ++i) queries.push_back(starts[random() % starts.size()] + 7);

  Timing parse, finish, add, lookup, lookup_all, choose_for_block;
  uint64_t found = 0;
  for (int run = 0; run < kRuns; ++run) {
    SymbolIndex index;
    Diagnostics diagnostics;
    uint32_t source = index.AddSource({"perf-1.map", "perf-map", "perf-1.map"});
    parse.Add(
        TimeMs([&] { cg_inject::ReadPerfMap(map, "perf-1.map", source, &index, &diagnostics); }));
    finish.Add(TimeMs([&] { index.Finish(); }));
    lookup.Add(TimeMs([&] {
      for (uint64_t q : queries) found += index.Lookup(q) != nullptr;
    }));
    lookup_all.Add(TimeMs([&] {
      for (uint64_t q : queries) found += index.LookupAll(q).size();
    }));
    // The injector's path: the block's entry and two more of its addresses.
    cg_inject::VersionChooser chooser(index, cg_inject::CodeArch::kX86_64);
    choose_for_block.Add(TimeMs([&] {
      for (uint64_t q : queries) {
        uint64_t addrs[] = {q, q + 1, q + 4};
        found += chooser.ChooseForBlock(q, addrs, 1) != nullptr;
      }
    }));

    // Versions handed over ready-made (the jitdump path minus decoding).
    std::vector<cg_inject::CodeVersionSpec> versions;
    versions.reserve(kSymbols);
    std::deque<std::string> names;  // what the versions' views point to; a deque never moves them
    for (int i = 0; i < kSymbols; ++i) {
      cg_inject::CodeVersionSpec v;
      v.start = starts[static_cast<size_t>(i)];
      v.size = 16;
      v.raw_name = names.emplace_back("function_" + std::to_string(i));
      versions.push_back(std::move(v));
    }
    SymbolIndex plain;
    add.Add(TimeMs([&] {
      for (const cg_inject::CodeVersionSpec& v : versions) plain.Add(v);
      plain.Finish();
    }));
  }
  parse.Print("ReadPerfMap (1M lines, names parsed)", kRuns);
  finish.Print("Finish (sort + tree)", kRuns);
  add.Print("Add 1M ready versions + Finish", kRuns);
  lookup.Print("1M Lookup", kRuns);
  lookup_all.Print("1M LookupAll", kRuns);
  choose_for_block.Print("1M ChooseForBlock (3 addrs, no code)", kRuns);
  std::printf("(checksum %" PRIu64 ")\n", found);
  return 0;
}
