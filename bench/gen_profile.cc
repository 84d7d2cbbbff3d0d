// Writes a benchmark profile and its JIT symbol sources (bench/profile_generator.h) to a directory:
//
//   gen_profile SIZE_MB DIR [SEED [FUNCTIONS [OBJECT...]]]
//
// creates DIR/callgrind.out.4242 (about SIZE_MB megabytes of 10^6 bytes), DIR/perf-4242.map and
// DIR/jit-4242.dump, and prints what it wrote. The same arguments give the same bytes. FUNCTIONS
// (default 60,000) is how many distinct functions the profile draws from; 45% of them are JIT
// code, each with one perf-map line and one CODE_LOAD (bench/wide.sh asks for 2,222,223 to get
// a jitdump of 1,000,000 CODE_LOADs). OBJECTs, when given, are the `ob=` names of the ordinary
// code (real files such as /usr/bin/node, so that cg-inject reads them) instead of 40 made-up ones.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/profile_generator.h"
#include "cg_inject/error.h"
#include "cg_inject/io.h"

namespace {

void WriteFile(const std::string& path, const std::string& bytes) {
  cg_inject::AtomicOutputFile out(path);
  out.Write(bytes);
  out.Commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_profile SIZE_MB DIR [SEED [FUNCTIONS [OBJECT...]]]\n");
    return 2;
  }
  cg_inject::bench::GeneratorOptions options;
  options.target_bytes = std::strtoull(argv[1], nullptr, 10) * 1000000;
  if (argc >= 4) options.seed = std::strtoull(argv[3], nullptr, 10);
  if (argc >= 5) options.functions = std::strtoll(argv[4], nullptr, 10);
  for (int i = 5; i < argc; ++i) options.objects.push_back(argv[i]);
  if (options.functions <= 0) {
    std::fprintf(stderr, "gen_profile: FUNCTIONS must be positive\n");
    return 2;
  }
  const std::string dir = argv[2];
  const std::string pid = std::to_string(options.pid);
  try {
    std::vector<cg_inject::bench::JitFunction> jit = cg_inject::bench::MakeJitFunctions(options);
    WriteFile(dir + "/perf-" + pid + ".map", cg_inject::bench::MakePerfMap(jit));
    WriteFile(dir + "/jit-" + pid + ".dump", cg_inject::bench::MakeJitdump(options, jit));
    cg_inject::AtomicOutputFile profile(dir + "/callgrind.out." + pid);
    uint64_t bytes = cg_inject::bench::WriteProfile(options, jit, &profile);
    profile.Commit();
    std::printf(
        "%s/callgrind.out.%s: %.1f MB, %zu JIT functions of %" PRId64 " (seed %" PRIu64 ")\n",
        dir.c_str(), pid.c_str(), double(bytes) / 1e6, jit.size(), options.functions, options.seed);
  } catch (const cg_inject::InputError& e) {
    std::fprintf(stderr, "gen_profile: %s\n", e.what());
    return 1;
  }
  return 0;
}
