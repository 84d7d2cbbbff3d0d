// Source discovery. perf looks for /tmp/perf-PID.map; runtimes write jitdumps to the working
// directory (V8 --perf-prof, LLVM/Julia with JITDUMPDIR unset), /tmp (CPython, .NET) or, after
// `perf record`, perf's own cache ~/.debug/jit/<name>/jit-PID.dump.
#include "sources/discovery.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>
#include <utility>

namespace cg_inject {
namespace {

class Collector {
 public:
  explicit Collector(std::vector<SourceSpec>* out) : out_(out) {}
  void TryAdd(const std::string& path, SourceKind kind) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (!seen_.insert({st.st_dev, st.st_ino}).second) return;
    out_->push_back({path, kind, false});
  }

 private:
  std::vector<SourceSpec>* out_;
  std::set<std::pair<dev_t, ino_t>> seen_;
};

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::vector<std::string> SubdirectoriesSorted(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::stat(Join(dir, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

DiscoveryRoots DiscoveryRoots::FromEnvironment() {
  DiscoveryRoots roots;
  if (const char* home = std::getenv("HOME"); home != nullptr) roots.home = home;
  return roots;
}

std::vector<SourceSpec> DiscoverSources(uint64_t pid, const DiscoveryRoots& roots) {
  std::vector<SourceSpec> found;
  Collector collector(&found);
  const std::string id = std::to_string(pid);
  const std::string map_name = "perf-" + id + ".map";
  const std::string dump_name = "jit-" + id + ".dump";
  collector.TryAdd(Join(roots.tmp_dir, map_name), SourceKind::kPerfMap);
  collector.TryAdd(Join(roots.cwd, dump_name), SourceKind::kJitdump);
  collector.TryAdd(Join(roots.tmp_dir, dump_name), SourceKind::kJitdump);
  if (!roots.home.empty()) {
    const std::string cache = Join(roots.home, ".debug/jit");
    for (const std::string& sub : SubdirectoriesSorted(cache)) {
      collector.TryAdd(Join(Join(cache, sub), dump_name), SourceKind::kJitdump);
    }
  }
  for (const std::string& dir : roots.jit_dirs) {
    collector.TryAdd(Join(dir, dump_name), SourceKind::kJitdump);
    collector.TryAdd(Join(dir, map_name), SourceKind::kPerfMap);
  }
  return found;
}

std::optional<uint64_t> ParsePidValue(std::string_view value) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!value.empty() && blank(value.front())) value.remove_prefix(1);
  while (!value.empty() && blank(value.back())) value.remove_suffix(1);
  uint64_t pid = 0;
  const char* end = value.data() + value.size();
  if (value.empty() || value.front() < '0' || value.front() > '9') return std::nullopt;
  auto [p, ec] = std::from_chars(value.data(), end, pid);
  if (ec != std::errc() || p != end || pid == 0 || pid > 0xffffffffu) return std::nullopt;
  return pid;
}

const char* SourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kPerfMap:
      return "perf map";
    case SourceKind::kJitdump:
      return "jitdump";
    case SourceKind::kDetect:
      return "symbol source";
  }
  return "symbol source";
}

}  // namespace cg_inject
