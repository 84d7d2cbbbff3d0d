// Source discovery. perf looks for /tmp/perf-PID.map; runtimes write jitdumps to the working
// directory (V8 --perf-prof, LLVM/Julia with JITDUMPDIR unset), /tmp (CPython, .NET) or, after
// `perf record`, perf's own cache ~/.debug/jit/<name>/jit-PID.dump. JavaScriptCore (Bun,
// BUN_JSC_useJITDump=1) creates its dump on its writer thread and names it after that thread and
// the process (FileSystem::createDumpFile): jit-TID-PID.dump in BUN_JSC_jitDumpDirectory, else a
// mkstemp file /tmp/jit-TID-PID-XXXXXX.
#include "sources/discovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

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

std::vector<std::string> NamesSorted(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* entry = ::readdir(d)) names.emplace_back(entry->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool AllDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// JavaScriptCore's jitdump names for `id` (the pid in decimal): "jit-TID-ID.dump", and with
// `temporary` also mkstemp's "jit-TID-ID-XXXXXX".
bool IsJscDumpName(std::string_view name, std::string_view id, bool temporary) {
  if (!name.starts_with("jit-")) return false;
  name.remove_prefix(4);
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos || !AllDigits(name.substr(0, dash))) return false;
  name.remove_prefix(dash + 1);
  if (!name.starts_with(id)) return false;
  name.remove_prefix(id.size());
  if (name == ".dump") return true;
  if (!temporary || name.size() != 7 || name[0] != '-') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
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
  auto add_jsc = [&](const std::string& dir, bool temporary) {
    for (const std::string& name : NamesSorted(dir)) {
      if (IsJscDumpName(name, id, temporary))
        collector.TryAdd(Join(dir, name), SourceKind::kJitdump);
    }
  };
  add_jsc(roots.cwd, false);
  add_jsc(roots.tmp_dir, true);
  for (const std::string& dir : roots.jit_dirs) add_jsc(dir, false);
  return found;
}

std::vector<std::string> FindJitdumpsOfProcess(const std::string& dir, uint64_t pid) {
  std::vector<std::string> found;
  for (const std::string& name : NamesSorted(dir)) {
    if (!name.starts_with("jit-")) continue;
    const std::string path = Join(dir, name);
    // O_NONBLOCK: a FIFO of that name is never waited on (it is no regular file anyway).
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    unsigned char header[24];
    const bool read_whole = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                            ::read(fd, header, sizeof header) == ssize_t(sizeof header);
    ::close(fd);
    if (!read_whole) continue;
    // The header (perf's jitdump-specification.txt): magic, version, size, e_machine, padding,
    // pid, all 32 bits in the writer's byte order, which the magic tells.
    uint32_t magic = 0, header_pid = 0;
    std::memcpy(&magic, header, 4);
    std::memcpy(&header_pid, header + 20, 4);
    if (magic == 0x4454694A) {
      header_pid = __builtin_bswap32(header_pid);
    } else if (magic != 0x4A695444) {
      continue;
    }
    if (header_pid == pid) found.push_back(path);
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
