// Speed of the injection stage alone: records are generated in memory (no reader, no writer) and
// pushed through an Injector into a sink that only counts. A profile of 1,000,000 cost lines and
// 100,000 calls with instruction positions: 70% in ordinary blocks (streamed through), 30% in
// JIT blocks of 20,000 perf-map functions, one in ten JIT lines in another function's code (tail
// jumps). Prints min/max/avg over the runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cg_inject/inject.h"
#include "cg_inject/profile.h"
#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

class CountingSink : public ProfileSink {
 public:
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext&) override { ++records; }
  void OnCost(const CostRecord&) override { ++records; }
  void OnCall(const CallRecord&) override { ++records; }
  void OnJump(const JumpRecord&) override { ++records; }
  void OnPartEnd() override {}
  int64_t records = 0;
};

constexpr int kJitFunctions = 20000;
constexpr uint64_t kJitBase = 0x10000000, kJitStride = 0x200;
constexpr int kCostLines = 1000000;

}  // namespace
}  // namespace cg_inject

int main() {
  using namespace cg_inject;
  SymbolIndex index;
  uint32_t source = index.AddSource({"/tmp/perf-1.map", "perf-map", "perf-1.map", 0});
  for (int i = 0; i < kJitFunctions; ++i) {
    CodeVersionSpec v;
    v.start = kJitBase + uint64_t(i) * kJitStride;
    v.size = 0x180;
    const std::string name = "LazyCompile:*f" + std::to_string(i);
    v.function_name = name;
    v.source_file = "app.js";
    v.source_line = uint32_t(i);
    v.source = source;
    index.Add(std::move(v));
  }
  index.Finish();

  // Names: ids unique per text, as the reader gives them.
  std::vector<std::string> texts = {"", "???", "/usr/lib/libfoo.so", "foo.c"};
  for (int i = 0; i < 1000; ++i) texts.push_back("ordinary" + std::to_string(i));
  size_t first_jit_name = texts.size();
  char buf[32];
  for (int i = 0; i < kJitFunctions; ++i) {
    std::snprintf(buf, sizeof buf, "0x%016llx",
                  (unsigned long long)(kJitBase + uint64_t(i) * kJitStride));
    texts.push_back(buf);
  }
  auto name = [&](size_t i) { return Name{uint32_t(i), texts[i]}; };

  std::vector<std::string_view> events = {"Ir"};
  PositionLayout layout;
  layout.kinds = {PositionKind::kInstr, PositionKind::kLine};
  layout.count = 2;
  std::vector<double> seconds;
  for (int run = 0; run < 5; ++run) {
    std::mt19937_64 rng(42);
    CountingSink sink;
    Injector injector(index, nullptr, InjectOptions{}, &sink);
    auto start = std::chrono::steady_clock::now();
    injector.OnPartBegin(0);
    injector.OnLayout(PartLayout{layout, events});
    uint64_t cost[1] = {0};
    int lines = 0;
    while (lines < kCostLines) {
      bool jit = rng() % 10 < 3;
      size_t fn = jit ? first_jit_name + rng() % kJitFunctions : 4 + rng() % 1000;
      uint64_t base =
          jit ? kJitBase + (fn - first_jit_name) * kJitStride : 0x1000 + (fn - 4) * 0x100;
      injector.OnFunction(FunctionContext{name(jit ? 1 : 2), name(jit ? 1 : 3), name(fn)});
      for (int k = 0; k < 20 && lines < kCostLines; ++k, ++lines) {
        uint64_t addr = base + (rng() % 0x60) * 4;
        if (jit && rng() % 10 == 0) addr = kJitBase + (rng() % kJitFunctions) * kJitStride + 8;
        cost[0] = 1 + rng() % 1000;
        injector.OnCost(CostRecord{Position{{addr, 0, 0}}, name(jit ? 1 : 3), cost});
        if (k % 10 == 0) {
          size_t target = first_jit_name + rng() % kJitFunctions;
          uint64_t taddr = kJitBase + (target - first_jit_name) * kJitStride;
          CallRecord call;
          call.count = 1 + rng() % 10;
          call.target = Position{{taddr, 0, 0}};
          call.source = Position{{addr, 0, 0}};
          call.source_file = name(jit ? 1 : 3);
          call.target_object = name(1);
          call.target_file = name(1);
          call.target_function = name(target);
          call.inclusive = cost;
          injector.OnCall(call);
        }
      }
    }
    auto stream_end = std::chrono::steady_clock::now();
    injector.OnPartEnd();
    if (run == 0)
      std::printf(
          "streaming %.3f s, part end %.3f s\n",
          std::chrono::duration<double>(stream_end - start).count(),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - stream_end).count());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (run == 0) {
      InjectStats stats = injector.stats();
      std::printf("records out: %lld, functions named: %lld, lines moved: %lld, violations: %zu\n",
                  (long long)sink.records, (long long)stats.functions_resolved,
                  (long long)stats.cost_lines_moved, stats.invariant_violations.size());
    }
  }
  double sum = 0;
  for (double s : seconds) sum += s;
  std::printf("injector, %d cost lines: min %.3f s, max %.3f s, avg %.3f s\n", kCostLines,
              *std::min_element(seconds.begin(), seconds.end()),
              *std::max_element(seconds.begin(), seconds.end()), sum / double(seconds.size()));
  return 0;
}
