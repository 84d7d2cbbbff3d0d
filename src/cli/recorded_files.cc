// Finding the Callgrind files of a recorded run. Callgrind expands %p in --callgrind-out-file to
// the pid of each traced process (children with --trace-children=yes get their own), then adds
// ".N" for the N-th dump (--dump-every-bb, CALLGRIND_DUMP_STATS, callgrind_control -d) and
// "-NN" for the thread with --separate-threads=yes (callgrind/dump.c: init_dump_file_names).
#include "cli/recorded_files.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>

namespace cg_inject {
namespace {

/// Reads a run of decimal digits from the front of `*text`; false when there is none.
bool ReadNumber(std::string_view* text, uint64_t* value) {
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), *value);
  if (ec != std::errc() || end == text->data()) return false;
  text->remove_prefix(size_t(end - text->data()));
  return true;
}

struct ParsedName {
  uint64_t pid = 0;
  uint64_t part = 0;    // 0: no ".N"
  uint64_t thread = 0;  // 0: no "-NN"
};

/// Parses PREFIX PID [.N] [-NN]; false for anything else.
bool ParseProfileName(std::string_view name, ParsedName* out) {
  std::string_view prefix = kRecordPrefix;
  if (!name.starts_with(prefix)) return false;
  name.remove_prefix(prefix.size());
  if (!ReadNumber(&name, &out->pid)) return false;
  if (name.starts_with('.')) {
    name.remove_prefix(1);
    if (!ReadNumber(&name, &out->part) || out->part == 0) return false;
  }
  if (name.starts_with('-')) {
    name.remove_prefix(1);
    if (!ReadNumber(&name, &out->thread) || out->thread == 0) return false;
  }
  return name.empty();
}

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace

std::vector<RecordedProcess> GroupRecordedProfiles(const std::string& dir,
                                                   const std::vector<DirEntry>& entries,
                                                   const std::set<std::string>& before) {
  struct Found {
    ParsedName parsed;
    const DirEntry* entry;
  };
  std::map<uint64_t, std::vector<Found>> by_pid;
  for (const DirEntry& e : entries) {
    ParsedName parsed;
    if (before.count(e.name) || !ParseProfileName(e.name, &parsed)) continue;
    by_pid[parsed.pid].push_back({parsed, &e});
  }
  std::vector<RecordedProcess> processes;
  for (auto& [pid, found] : by_pid) {
    bool has_threads = std::any_of(found.begin(), found.end(),
                                   [](const Found& f) { return f.parsed.thread != 0; });
    // The file without ".N" holds the last dump (at exit), so it sorts after the parts.
    auto order = [](const Found& f) {
      return std::make_tuple(f.parsed.part == 0 ? UINT64_MAX : f.parsed.part, f.parsed.thread);
    };
    std::sort(found.begin(), found.end(),
              [&](const Found& a, const Found& b) { return order(a) < order(b); });
    RecordedProcess process;
    process.pid = pid;
    for (const Found& f : found) {
      bool bare = f.parsed.part == 0 && f.parsed.thread == 0;
      if (bare && has_threads && f.entry->size == 0) continue;
      process.profiles.push_back(Join(dir, f.entry->name));
    }
    if (!process.profiles.empty()) processes.push_back(std::move(process));
  }
  return processes;
}

std::set<std::string> UnchangedNames(const std::vector<DirEntry>& before,
                                     const std::vector<DirEntry>& after) {
  std::map<std::string_view, const DirEntry*> old;
  for (const DirEntry& e : before) old[e.name] = &e;
  std::set<std::string> unchanged;
  for (const DirEntry& e : after) {
    auto it = old.find(e.name);
    if (it != old.end() && it->second->size == e.size && it->second->mtime_ns == e.mtime_ns &&
        it->second->inode == e.inode)
      unchanged.insert(e.name);
  }
  return unchanged;
}

std::vector<DirEntry> ListDirectory(const std::string& dir) {
  std::vector<DirEntry> entries;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return entries;
  while (const dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    struct stat st;
    if (::stat(Join(dir, name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      int64_t mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
      entries.push_back({name, uint64_t(st.st_size), mtime_ns, uint64_t(st.st_ino)});
    }
  }
  ::closedir(d);
  return entries;
}

}  // namespace cg_inject
