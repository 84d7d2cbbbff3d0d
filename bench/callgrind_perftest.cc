// Throughput and memory of the Callgrind reader and writer on a generated profile shaped like a
// real `--dump-instr=yes --collect-jumps=yes` run: 9 cache events, instr+line positions with
// relative subpositions, name compression, many calls and conditional jumps.
//
// Usage: callgrind_perftest [MEGABYTES] (default 200). Generates MEGABYTES/4 and then MEGABYTES
// of profile into temporary files (streamed, never held in memory), and for each prints MB/s
// of read-only (records into a counting sink) and read+write (into a discarding byte sink),
// min/max/avg over 3 runs, plus the process's peak RSS after each size: equal peaks show
// that memory does not grow with the file size.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "callgrind/callgrind_reader.h"
#include "callgrind/callgrind_writer.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/profile.h"

namespace cg_inject {
namespace {

class CountingSink : public ProfileSink {
 public:
  uint64_t records = 0, cost_sum = 0;
  void OnPartBegin(int) override {}
  void OnHeader(std::string_view, std::string_view) override {}
  void OnLayout(const PartLayout&) override {}
  void OnFunction(const FunctionContext&) override { ++records; }
  void OnCost(const CostRecord& c) override {
    ++records;
    cost_sum += c.costs[0];
  }
  void OnCall(const CallRecord& c) override {
    ++records;
    cost_sum += c.inclusive[0];
  }
  void OnJump(const JumpRecord&) override { ++records; }
  void OnPartEnd() override {}
};

class NullByteSink : public ByteSink {
 public:
  uint64_t bytes = 0;
  void Write(std::string_view b) override { bytes += b.size(); }
  void Finish() override {}
};

/// Writes about `target_bytes` of profile to `path`.
uint64_t Generate(const std::string& path, uint64_t target_bytes) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::exit(1);
  }
  static char buf[1 << 20];
  std::setvbuf(f, buf, _IOFBF, sizeof buf);
  std::mt19937_64 rng(42);
  std::fputs(
      "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 4242\n"
      "cmd:  ./bench --iterations 100\npart: 1\n\ndesc: I1 cache: 32768 B, 64 B, 8-way "
      "associative\n"
      "desc: Timerange: Basic block 0 - 123456789\ndesc: Trigger: Program termination\n\n"
      "positions: instr line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
      "summary: 123456789 1 2 3 4 5 6 7 8\n\n",
      f);
  constexpr int kObjects = 40, kFiles = 3000, kFunctions = 60000;
  std::vector<bool> ob_seen(kObjects), fl_seen(kFiles), fn_seen(kFunctions);
  auto name = [&](const char* tag, std::vector<bool>& seen, int id, const std::string& text) {
    if (seen[id]) {
      std::fprintf(f, "%s=(%d)\n", tag, id + 1);
    } else {
      std::fprintf(f, "%s=(%d) %s\n", tag, id + 1, text.c_str());
      seen[id] = true;
    }
  };
  auto object_name = [](int i) {
    return "/usr/lib/x86_64-linux-gnu/libbench" + std::to_string(i) + ".so.1";
  };
  auto file_name = [](int i) {
    return "/build/project/src/module" + std::to_string(i / 10) + "/file" + std::to_string(i) +
           ".cc";
  };
  auto fn_name = [](int i) {
    return "bench::ns" + std::to_string(i % 97) + "::Class" + std::to_string(i % 1013) +
           "::method" + std::to_string(i) + "(std::vector<int, std::allocator<int> > const&)";
  };
  long written = 0;
  while (static_cast<uint64_t>(written = std::ftell(f)) < target_bytes) {
    int fn = static_cast<int>(rng() % kFunctions);
    int ob = fn % kObjects, fl = fn % kFiles;
    std::fputc('\n', f);
    name("ob", ob_seen, ob, object_name(ob));
    name("fl", fl_seen, fl, file_name(fl));
    name("fn", fn_seen, fn, fn_name(fn));
    uint64_t addr = 0x400000 + static_cast<uint64_t>(fn) * 0x140;
    unsigned line = 100 + static_cast<unsigned>(fn % 900);
    std::fprintf(f, "0x%lx %u %lu %lu %lu 1\n", static_cast<unsigned long>(addr), line,
                 static_cast<unsigned long>(rng() % 100000),
                 static_cast<unsigned long>(rng() % 5000),
                 static_cast<unsigned long>(rng() % 3000));
    int lines = 8 + static_cast<int>(rng() % 24);
    for (int i = 0; i < lines; ++i) {
      unsigned step = 1 + static_cast<unsigned>(rng() % 7);
      int dl = static_cast<int>(rng() % 5) - 1;
      uint64_t r = rng() % 10;
      if (r < 7) {
        std::fprintf(f, "+%u %s%d %lu %lu %lu\n", step, dl < 0 ? "" : "+", dl,
                     static_cast<unsigned long>(rng() % 40000),
                     static_cast<unsigned long>(rng() % 900),
                     static_cast<unsigned long>(rng() % 700));
      } else if (r < 9) {
        int callee = static_cast<int>(rng() % kFunctions);
        if (callee % kObjects != ob)
          name("cob", ob_seen, callee % kObjects, object_name(callee % kObjects));
        if (callee % kFiles != fl)
          name("cfi", fl_seen, callee % kFiles, file_name(callee % kFiles));
        name("cfn", fn_seen, callee, fn_name(callee));
        std::fprintf(f, "calls=%lu 0x%lx %d\n", static_cast<unsigned long>(1 + rng() % 300),
                     static_cast<unsigned long>(0x400000 + static_cast<uint64_t>(callee) * 0x140),
                     100 + callee % 900);
        std::fprintf(
            f, "+%u * %lu %lu %lu 3 2 1\n", step, static_cast<unsigned long>(rng() % 9000000),
            static_cast<unsigned long>(rng() % 90000), static_cast<unsigned long>(rng() % 9000));
      } else {
        std::fprintf(f, "jcnd=%lu/%lu +%u *\n+%u *\n", static_cast<unsigned long>(rng() % 100),
                     static_cast<unsigned long>(100 + rng() % 100), step + 20, step);
      }
    }
  }
  std::fputs("\ntotals: 123456789 1 2 3 4 5 6 7 8\n", f);
  written = std::ftell(f);
  std::fclose(f);
  return static_cast<uint64_t>(written);
}

long PeakRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

/// Prints MB/s by wall-clock time and by CPU time; on a shared machine the CPU figure is the
/// stable one.
template <typename Fn>
void Measure(const char* label, uint64_t bytes, Fn fn) {
  double min = 1e30, max = 0, sum = 0, cpu_best = 0;
  constexpr int kRuns = 3;
  for (int i = 0; i < kRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    double cpu_start = CpuSeconds();
    fn();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double mb = static_cast<double>(bytes) / 1e6;
    double mbps = mb / seconds;
    min = std::min(min, mbps);
    max = std::max(max, mbps);
    sum += mbps;
    cpu_best = std::max(cpu_best, mb / (CpuSeconds() - cpu_start));
  }
  std::printf("  %-12s wall min %7.1f  max %7.1f  avg %7.1f MB/s; cpu best %7.1f MB/s\n", label,
              min, max, sum / kRuns, cpu_best);
}

void Run(uint64_t megabytes) {
  char path_template[] = "/tmp/callgrind_perftest.XXXXXX";
  int fd = mkstemp(path_template);
  if (fd < 0) {
    std::perror("mkstemp");
    std::exit(1);
  }
  close(fd);
  std::string path = path_template;
  uint64_t bytes = Generate(path, megabytes << 20);
  std::printf("profile: %.1f MB\n", static_cast<double>(bytes) / 1e6);
  try {
    Measure("read", bytes, [&] {
      auto in = OpenInput(path);
      CountingSink sink;
      ReadCallgrind(*in, sink);
    });
    Measure("read+write", bytes, [&] {
      auto in = OpenInput(path);
      NullByteSink out;
      CallgrindWriter writer(&out);
      ReadCallgrind(*in, writer);
    });
  } catch (const InputError& e) {
    std::fprintf(stderr, "callgrind_perftest: %s\n", e.what());
    unlink(path.c_str());
    std::exit(1);
  }
  unlink(path.c_str());
  std::printf("  peak RSS so far: %ld KiB\n", PeakRssKb());
}

/// Memory on wide inputs (issue 12): `functions` distinct functions, each with one cost line and
/// one call, read and written once; prints the peak RSS, which grows with the functions (names,
/// compression ids, per-function sums), not with the lines. Run alone (`--wide`) so the peak is
/// this case's.
void RunWide(int64_t functions) {
  char path_template[] = "/tmp/callgrind_perftest_wide.XXXXXX";
  int fd = mkstemp(path_template);
  if (fd < 0) {
    std::perror("mkstemp");
    std::exit(1);
  }
  std::string path = path_template;
  {
    std::string text =
        "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npositions: line\n"
        "events: Ir\nob=/usr/bin/app\nfl=src/app.c\n";
    char line[160];
    for (int64_t i = 0; i < functions; ++i) {
      int n =
          std::snprintf(line, sizeof line,
                        "fn=function_number_%07lld\n%lld 1\ncfn=function_number_%07lld\n"
                        "calls=1 1\n%lld 1\n",
                        static_cast<long long>(i), static_cast<long long>(i + 1),
                        static_cast<long long>((i + 1) % functions), static_cast<long long>(i + 1));
      text.append(line, static_cast<size_t>(n));
      if (text.size() > (1 << 20)) {
        if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::exit(1);
        text.clear();
      }
    }
    text += "totals: " + std::to_string(functions) + "\n";
    if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::exit(1);
    close(fd);
  }
  auto in = OpenInput(path);
  NullByteSink out;
  CallgrindWriter writer(&out);
  ReadCallgrind(*in, writer);
  unlink(path.c_str());
  std::printf(
      "wide: %lld functions read+write, peak RSS %ld KiB (goal: 256 MB for 1M with the "
      "injector)\n",
      static_cast<long long>(functions), PeakRssKb());
}

}  // namespace
}  // namespace cg_inject

int main(int argc, char** argv) {
  if (argc > 1 && std::string_view(argv[1]) == "--wide") {
    cg_inject::RunWide(argc > 2 ? std::strtoll(argv[2], nullptr, 10) : 1000000);
    return 0;
  }
  uint64_t megabytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200;
  if (megabytes < 4) megabytes = 4;
  cg_inject::Run(megabytes / 4);
  cg_inject::Run(megabytes);
  return 0;
}
