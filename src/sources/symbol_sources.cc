#include "sources/symbol_sources.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include "cg_inject/error.h"
#include "cg_inject/io.h"
#include "cg_inject/symbols.h"
#include "sources/jitdump.h"
#include "sources/mapped_file.h"
#include "sources/perf_map.h"

namespace cg_inject {
namespace {

std::string Count(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Whether `a` and `b` are the same file or two regular files with the same bytes (a jitdump in
// /tmp and its copy in the working directory; one found by pid and one named). Sizes differ for
// almost every pair, so the bytes of few pairs are compared.
bool SameContent(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode)) return false;
  if (sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino) return true;
  if (sa.st_size != sb.st_size) return false;
  std::shared_ptr<MappedFile> ma = MappedFile::TryOpen(a);
  std::shared_ptr<MappedFile> mb = MappedFile::TryOpen(b);
  std::string ra, rb;
  std::string_view va = ma ? ma->bytes() : std::string_view(ra = ReadWholeFile(a));
  std::string_view vb = mb ? mb->bytes() : std::string_view(rb = ReadWholeFile(b));
  return va == vb;
}

/// Refuses a source that is neither a regular file nor a pipe (stdin included): a device such as
/// /dev/zero or /dev/urandom never ends, and a directory or socket holds no map.
void RequireFileOrPipe(const std::string& path) {
  struct stat st;
  int rc = path == "-" ? fstat(0, &st) : stat(path.c_str(), &st);
  if (rc != 0) return;  // the open that follows says why, as it always has
  const char* what = S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ? nullptr
                     : S_ISCHR(st.st_mode)                       ? "a character device"
                     : S_ISBLK(st.st_mode)                       ? "a block device"
                     : S_ISDIR(st.st_mode)                       ? "a directory"
                     : S_ISSOCK(st.st_mode)                      ? "a socket"
                                                                 : "a special file";
  if (what != nullptr) {
    ThrowForFile(path, std::string("expected a regular file or a pipe, got ") + what);
  }
}

/// Reads a source that is not mapped (a pipe, stdin, a compressed file) with a bound: a jitdump's
/// header is checked as soon as its 40 bytes are in, and a perf map line may not reach 64 MiB,
/// so an endless stream of garbage fails early. The total is not capped: a pipe that goes on
/// sending well-formed perf-map lines or jitdump records is read as long as it sends.
std::string ReadSourceStream(ByteSource& in, SourceKind kind) {
  std::string data;
  size_t chunk = 1 << 16;
  bool decided = false;
  bool perf_map = false;
  size_t line_start = 0;  // of the perf-map line being read
  size_t scanned = 0;     // bytes searched for newlines
  uint64_t line_no = 1;
  for (;;) {
    size_t old = data.size();
    data.resize(old + chunk);
    size_t n = in.Read(data.data() + old, chunk);
    data.resize(old + n);
    if (!decided && (data.size() >= 40 || n == 0)) {
      decided = true;
      bool jitdump = LooksLikeJitdump(data);
      // A jitdump named with --perf-map is refused by the caller, with all it needs here.
      if (kind == SourceKind::kPerfMap && jitdump) return data;
      if (kind == SourceKind::kJitdump || jitdump) {
        CheckJitdumpHeader(data, in.display_name());
      } else {
        perf_map = true;
      }
    }
    if (perf_map) {
      for (;;) {
        const void* newline = std::memchr(data.data() + scanned, '\n', data.size() - scanned);
        if (newline == nullptr) break;
        line_start = static_cast<size_t>(static_cast<const char*>(newline) - data.data()) + 1;
        scanned = line_start;
        ++line_no;
      }
      scanned = data.size();
      if (data.size() - line_start >= kMaxPerfMapLineSize) {
        ThrowAtLine(in.display_name(), line_no,
                    "expected a line shorter than 64 MiB, got a longer one");
      }
    }
    if (n == 0) break;
    if (chunk < (1 << 24)) chunk *= 2;
  }
  return data;
}

}  // namespace

std::string_view SourceObjectName(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  // A compressed copy names the same code as the original: jit-9.dump.zst is jit-9.dump.
  if (name.ends_with(".zst") && name.size() > 4) name.remove_suffix(4);
  return name;
}

LoadedSource LoadSymbolSourceBytes(std::string_view bytes, const std::string& path, SourceKind kind,
                                   SymbolIndex* index, Diagnostics* diagnostics,
                                   const std::function<void(size_t)>& done_with) {
  const bool is_jitdump = LooksLikeJitdump(bytes);
  if (kind == SourceKind::kDetect) kind = is_jitdump ? SourceKind::kJitdump : SourceKind::kPerfMap;
  if (kind == SourceKind::kPerfMap && is_jitdump) {
    ThrowForFile(path, "expected a perf map, got a jitdump (pass it with --jitdump)");
  }
  LoadedSource loaded;
  loaded.path = path;
  loaded.kind = kind;
  SymbolSourceInfo info;
  info.path = path;
  info.kind = kind == SourceKind::kJitdump ? "jitdump" : "perf-map";
  info.object_name = std::string(SourceObjectName(path));
  loaded.source = index->AddSource(std::move(info));
  if (kind == SourceKind::kJitdump) {
    JitdumpStats stats = ReadJitdump(bytes, path, loaded.source, index, diagnostics, done_with);
    loaded.details = Count(stats.loads, "code load", "code loads");
    if (stats.moves > 0) loaded.details += ", " + Count(stats.moves, "move", "moves");
    if (stats.debug_infos > 0) {
      loaded.details += ", " + Count(stats.debug_infos, "line table", "line tables");
    }
    if (stats.scan.truncated) {
      // --stats says it too (SymbolSourceInfo::damage), not only the warning and -v.
      std::string cut = "last record cut off (1 record, " +
                        std::to_string(stats.scan.dropped_bytes) + " bytes dropped)";
      loaded.details += ", " + cut;
      SymbolSourceInfo* info = index->mutable_source(loaded.source);
      info->damage = std::move(cut);
      info->dropped_records = 1;
      info->dropped_bytes = stats.scan.dropped_bytes;
    }
    if (stats.header.flags & kJitdumpFlagArchTimestamp) {
      loaded.details += ", arch timestamps";  // TSC-style; only their order is used here
    }
    if (stats.header.byte_swapped) loaded.details += ", byte-swapped";
  } else {
    PerfMapStats stats = ReadPerfMap(bytes, path, loaded.source, index, diagnostics, done_with);
    loaded.details = Count(stats.entries, "entry", "entries");
    if (stats.bad_lines > 0) {
      loaded.details += ", " + Count(stats.bad_lines, "bad line", "bad lines") + " skipped";
    }
    std::string damage;
    if (stats.bad_lines > 0) damage = Count(stats.bad_lines, "bad line", "bad lines") + " skipped";
    if (stats.torn_lines > 0) {
      std::string torn = Count(stats.torn_lines, "torn line", "torn lines") + " (" +
                         Count(stats.cut_names, "name", "names") + " cut off)";
      loaded.details += ", " + torn;
      damage += (damage.empty() ? "" : ", ") + torn;
    }
    index->mutable_source(loaded.source)->damage = std::move(damage);
  }
  loaded.versions = index->sources()[loaded.source].records;
  return loaded;
}

std::vector<LoadedSource> LoadSymbolSources(const std::vector<SourceSpec>& specs,
                                            SymbolIndex* index, Diagnostics* diagnostics) {
  // A file whose content a later spec has too is loaded once, as that later spec (explicit files
  // come last and win): loaded twice, every range would be "reused", choices between the copies
  // ambiguous, and the ELF image written twice.
  std::vector<size_t> copy_of(specs.size(), SIZE_MAX);
  for (size_t i = 0; i < specs.size(); ++i) {
    for (size_t j = i + 1; j < specs.size() && copy_of[i] == SIZE_MAX; ++j) {
      if (SameContent(specs[i].path, specs[j].path)) copy_of[i] = j;
    }
  }
  std::vector<LoadedSource> loaded;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (copy_of[i] != SIZE_MAX) continue;
    const SourceSpec& spec = specs[i];
    // Mapped, not read: a big map or dump is not copied into the heap, and what a reader is done
    // with leaves the resident set as it goes (MappedFile::Release). stdin and pipes are read.
    // Checked before anything opens it: a device would be opened (and a tape or terminal can
    // block there) only to be refused.
    RequireFileOrPipe(spec.path);
    std::shared_ptr<MappedFile> mapped = MappedFile::TryOpen(spec.path);
    std::string bytes;
    std::string_view view;
    if (mapped) {
      view = mapped->bytes();
      // Stored captures keep big maps and dumps zstd-compressed; the zstd magics cannot start a
      // perf map line or a jitdump, so they are safe to recognize here.
      if (StartsWithZstdFrame(view)) {
        std::unique_ptr<ByteSource> plain = OpenMemoryInput(view, spec.path);
        bytes = ReadSourceStream(*plain, spec.kind);
        view = bytes;
        mapped.reset();
      }
    } else {
      std::unique_ptr<ByteSource> in = OpenInput(spec.path);  // decompresses zstd
      bytes = ReadSourceStream(*in, spec.kind);
      view = bytes;
    }
    // A jitdump's code bytes stay where they are, in bytes the index adopts, so they are not
    // held twice; a perf map's names are copied, so its bytes are dropped here.
    if (LooksLikeJitdump(view)) {
      if (mapped) {
        // The index keeps the mapping (`owner`) as long as this function that points into it.
        index->AdoptBytes(mapped, view,
                          [file = mapped.get(), size = view.size()] { file->Release(0, size); });
      } else {
        view = index->AdoptBuffer(std::move(bytes));
      }
    }
    std::function<void(size_t)> done_with;
    if (mapped) done_with = [&mapped](size_t done) { mapped->Release(0, done); };
    loaded.push_back(
        LoadSymbolSourceBytes(view, spec.path, spec.kind, index, diagnostics, done_with));
    // Code bytes are read again only for the versions the profile runs.
    if (mapped) mapped->Release(0, view.size());
    for (size_t k = 0; k < i; ++k) {
      size_t last = k;
      while (copy_of[last] != SIZE_MAX) last = copy_of[last];
      if (last == i) loaded.back().copies.push_back(specs[k].path);
    }
    for (size_t c = 0; c < loaded.back().copies.size(); ++c) {
      loaded.back().details += (c == 0 ? "; same content as " : ", ") + loaded.back().copies[c];
    }
    if (!loaded.back().copies.empty()) loaded.back().details += ", not loaded again";
  }
  index->Finish();
  for (LoadedSource& source : loaded) {
    if (int64_t same = index->sources()[source.source].superseded; same > 0) {
      source.details += "; a jitdump describes " + std::to_string(same) +
                        " of them too, and its versions are used";
    }
  }
  return loaded;
}

}  // namespace cg_inject
