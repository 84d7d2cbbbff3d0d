// Pairs MoarVM's moar-jit-N.bin files with its perf map (see moar_jit_code.h). MoarVM
// (src/jit/compile.c, MVM_jit_compile_graph) writes the map line and then the file for every
// frame it compiles, so the order of lines and the numbering of files agree; the size check
// catches a map that lost or gained a line (a torn write) and stops the pairing from drifting
// silently: every mismatch is counted.
#include "sources/moar_jit_code.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/symbols.h"

namespace cg_inject {
namespace {

/// N of "moar-jit-N.bin", or false for other names.
bool ParseCodeFileName(std::string_view name, uint64_t* number) {
  constexpr std::string_view kPrefix = "moar-jit-", kSuffix = ".bin";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return false;
  name.remove_prefix(kPrefix.size());
  name.remove_suffix(kSuffix.size());
  if (name.empty()) return false;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), *number);
  return ec == std::errc() && end == name.data() + name.size();
}

}  // namespace

std::string FindMoarCodeDir(const std::string& perf_map_path) {
  size_t slash = perf_map_path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : perf_map_path.substr(0, slash);
  std::string_view name = std::string_view(perf_map_path).substr(slash + 1);
  if (!name.starts_with("perf-") || !name.ends_with(".map")) return "";
  std::string_view pid = name.substr(5, name.size() - 9);
  std::string candidate = dir + "/moar-jit." + std::string(pid);
  struct stat st;
  if (stat(candidate.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  return candidate;
}

std::vector<MoarCodeFile> ReadMoarCodeDir(const std::string& dir) {
  std::vector<MoarCodeFile> files;
  DIR* d = opendir(dir.c_str());
  if (!d) ThrowSystemError("cannot open directory", dir, errno);
  std::vector<std::pair<uint64_t, std::string>> names;
  while (dirent* e = readdir(d)) {
    uint64_t number = 0;
    if (ParseCodeFileName(e->d_name, &number)) names.emplace_back(number, e->d_name);
  }
  closedir(d);
  for (auto& [number, name] : names) files.push_back({number, ReadWholeFile(dir + "/" + name)});
  return files;
}

MoarCodeStats AttachMoarCode(std::vector<MoarCodeFile> files, uint32_t source, SymbolIndex* index) {
  MoarCodeStats stats;
  stats.files = int64_t(files.size());
  std::sort(files.begin(), files.end(),
            [](const MoarCodeFile& a, const MoarCodeFile& b) { return a.number < b.number; });
  size_t next = 0;
  for (size_t i = 0; i < index->size(); ++i) {
    if (index->version(i).source() != source) continue;
    ++stats.lines;
    if (next >= files.size()) continue;
    MoarCodeFile& file = files[next++];
    if (file.code.size() != index->version(i).size() || file.code.empty()) {
      ++stats.size_mismatches;
      continue;
    }
    index->SetCode(i, file.code);
    ++stats.paired;
  }
  if (stats.paired > 0) {
#if defined(__aarch64__)
    index->mutable_source(source)->elf_machine = 183;  // EM_AARCH64
#else
    index->mutable_source(source)->elf_machine = 62;  // EM_X86_64
#endif
  }
  return stats;
}

}  // namespace cg_inject
