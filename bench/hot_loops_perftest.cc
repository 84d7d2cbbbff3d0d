// Google Benchmark for the hot loops of a rewrite, on a 16 MB profile from the benchmark
// generator (bench/profile_generator.h) held in memory, so no disk is involved:
//
//   build/bench/hot_loops_perftest [--benchmark_filter=Read]
//
// LineReader: splitting into lines (memchr over big blocks). ReadCallgrind: the whole reader
// (line splitting, dispatch, X3 parsing of positions and costs, name and position decompression)
// into a sink that only counts. WriteCostLines: the writer's formatting of cost lines (position
// compression, number formatting) from ready-made records.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/profile_generator.h"
#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "callgrind/line_reader.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"

namespace cg_inject {
namespace {

const std::string& Profile() {
  static const std::string* profile = [] {
    bench::GeneratorOptions options;
    options.target_bytes = uint64_t{16} << 20;
    StringSink sink;
    bench::WriteProfile(options, bench::MakeJitFunctions(options), &sink);
    return new std::string(sink.data());
  }();
  return *profile;
}

class CountingSink : public ProfileSink {
 public:
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext&) override { ++records; }
  void OnCost(const CostRecord& cost) override { records += cost.costs[0]; }
  void OnCall(const CallRecord&) override { ++records; }
  void OnJump(const JumpRecord&) override { ++records; }
  void OnPartEnd() override {}
  uint64_t records = 0;
};

class CountingByteSink : public ByteSink {
 public:
  void Write(std::string_view bytes) override { this->bytes += bytes.size(); }
  void Finish() override {}
  uint64_t bytes = 0;
};

void BM_LineReader(benchmark::State& state) {
  const std::string& profile = Profile();
  for (auto _ : state) {
    auto in = OpenMemoryInput(profile, "bench");
    LineReader reader(in.get());
    std::string_view line;
    uint64_t lines = 0;
    while (reader.ReadLine(&line)) ++lines;
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(profile.size()));
}
BENCHMARK(BM_LineReader)->Unit(benchmark::kMillisecond);

void BM_ReadCallgrind(benchmark::State& state) {
  const std::string& profile = Profile();
  for (auto _ : state) {
    auto in = OpenMemoryInput(profile, "bench");
    CountingSink sink;
    ReadCallgrind(*in, sink);
    benchmark::DoNotOptimize(sink.records);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(profile.size()));
}
BENCHMARK(BM_ReadCallgrind)->Unit(benchmark::kMillisecond);

void BM_WriteCostLines(benchmark::State& state) {
  constexpr int kLines = 1000000;
  const std::vector<std::string_view> events = {"Ir", "Dr", "Dw"};
  PositionLayout layout;
  layout.kinds = {PositionKind::kInstr, PositionKind::kLine};
  layout.count = 2;
  std::vector<std::string> names;
  for (int i = 0; i < 1000; ++i) names.push_back("0x" + std::to_string(0x4a2e000 + i * 0x200));
  uint64_t bytes = 0;
  for (auto _ : state) {
    CountingByteSink out;
    CallgrindWriter writer(&out);
    writer.OnPartBegin(0);
    writer.OnLayout(PartLayout{layout, events});
    Name unknown{1, "???"};
    uint64_t costs[3] = {0, 0, 0};
    for (int i = 0; i < kLines; ++i) {
      if (i % 16 == 0) {
        int fn = (i / 16) % 1000;
        writer.OnFunction(FunctionContext{unknown, unknown, Name{uint32_t(2 + fn), names[fn]}});
      }
      costs[0] = 1 + uint64_t(i) % 5000;
      costs[1] = uint64_t(i) % 2000;
      costs[2] = uint64_t(i) % 1000;
      uint64_t addr = 0x4a2e000 + uint64_t(i % 16000) * 0x20 + uint64_t(i % 16) * 3;
      writer.OnCost(CostRecord{Position{{addr, 0, 0}}, unknown, costs});
    }
    writer.OnPartEnd();
    bytes += out.bytes;
  }
  state.SetBytesProcessed(int64_t(bytes));
  state.SetItemsProcessed(int64_t(state.iterations()) * kLines);
}
BENCHMARK(BM_WriteCostLines)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cg_inject

BENCHMARK_MAIN();
