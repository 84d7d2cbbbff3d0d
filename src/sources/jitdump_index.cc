// Jitdump semantics, as tools/perf/util/jitdump.c applies the records: CODE_LOAD adds code,
// a DEBUG_INFO describes the next CODE_LOAD of its code_addr, CODE_MOVE gives a function a new
// address from its timestamp on. The writers' quirks live here too (see ReadJitdump in
// jitdump.h); decoding and validation are in jitdump.cc.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <string>
#include <unordered_map>

#include "cg_inject/diagnostics.h"
#include "cg_inject/symbols.h"
#include "sources/jitdump.h"
#include "sources/name_location.h"

namespace cg_inject {
namespace {

// Writers place debug entries as if the code sat after a 64-byte ELF header, where
// `perf inject` puts it (V8 perf-jit.cc kElfHeaderSize; LLVM's perf listener does the same).
constexpr uint64_t kElfHeaderOffset = 0x40;

std::string Hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

// A CODE_LOAD that came with a line table. Its version is in the index already; the table waits
// for Finish, which decides the +0x40 quirk over the whole dump. Loads without a table (most of
// a big dump) keep nothing here.
struct PendingTable {
  size_t version = 0;                      // load order (SymbolIndex::version)
  uint64_t start = 0, size = 0;            // of that version
  std::vector<JitdumpDebugEntry> entries;  // raw line table, views into the dump
};

// A CODE_MOVE's version: it gets its base's line table, moved, once the base has one.
struct MovedVersion {
  size_t version = 0, base = 0;
};

enum class Shift { kNo, kYes, kUndecided, kNeither };

// BEAMJIT opens each table with one entry in the function's `-CodeInfoPrologue` helper, a few
// tens of bytes before code_addr (48 to 55 on x86-64 OTP 25); that entry covers the code from its
// start. Farther than this, an entry before the code is not a prologue's.
constexpr uint64_t kMaxLeadDistance = 0x100;

// Whether every entry fits the code [start, start + size) once `delta` (0 or the +0x40) is taken
// off. An entry exactly at the end is accepted (writers close tables with a line-0 one there).
// `lead` also accepts the table's first entry (file order) up to kMaxLeadDistance before the code.
// Offsets from the start, so nothing overflows near the top of the address space.
bool Fits(const PendingTable& table, uint64_t delta, bool lead) {
  for (size_t i = 0; i < table.entries.size(); ++i) {
    const uint64_t addr = table.entries[i].addr;
    uint64_t before = 0;  // how far before the code the entry lies, once shifted
    if (addr < table.start) {
      before = table.start - addr;
      if (before > kMaxLeadDistance) return false;  // also keeps `before + delta` small
      before += delta;
    } else if (addr - table.start < delta) {
      before = delta - (addr - table.start);
    } else if (addr - table.start - delta > table.size) {
      return false;
    }
    if (before > 0 && !(lead && i == 0 && before <= kMaxLeadDistance)) return false;
  }
  return true;
}

// Whether a line table's addresses carry the writers' +0x40: decided from the addresses alone
// when only one reading puts every entry inside the code. Readings that need no lead entry come
// first, so a table that fits without one is read as before.
Shift JudgeShift(const PendingTable& table) {
  if (table.entries.empty()) return Shift::kNo;
  for (bool lead : {false, true}) {
    const bool fits_raw = Fits(table, 0, lead);
    const bool fits_shifted = Fits(table, kElfHeaderOffset, lead);
    if (fits_raw && fits_shifted) return Shift::kUndecided;
    if (fits_shifted) return Shift::kYes;
    if (fits_raw) return Shift::kNo;
  }
  return Shift::kNeither;
}

// Versions go into the index as their records arrive (file order is load order), so a big dump
// never holds a second copy of its versions; only line tables and moves wait for Finish.
class IndexBuilder : public JitdumpVisitor {
 public:
  IndexBuilder(std::string_view path, uint32_t source, SymbolIndex* index, Diagnostics* diagnostics,
               JitdumpStats* stats, const std::function<void(size_t)>& done_with)
      : path_(path),
        source_(source),
        index_(index),
        diagnostics_(diagnostics),
        stats_(stats),
        done_with_(done_with) {}

  void OnHeader(const JitdumpHeader& header) override {
    stats_->header = header;
    index_->mutable_source(source_)->elf_machine = header.elf_machine;
  }

  void OnCodeLoad(const JitdumpCodeLoad& load) override {
    ++stats_->loads;
    if (done_with_ && load.prefix.file_offset >= next_done_) {
      done_with_(next_done_);
      next_done_ += kDoneStep;
    }
    CodeVersionSpec v;
    // Julia writes vma = 0; perf itself maps code at code_addr, so that is the address used.
    v.start = load.code_addr;
    v.size = load.code_size;
    // Views into the dump and into `location`, both alive until Add has stored them.
    v.raw_name = load.name;
    NameLocation location = ParseNameLocation(load.name);
    v.function_name = location.function;
    v.source_file = location.file;
    v.source_line = location.line_no;
    v.definition_line = location.line_no;
    v.definition_column = location.column;
    v.definition_tag = location.definition_tag;
    v.source = source_;
    v.timestamp = load.prefix.timestamp;
    v.code_index = load.code_index;
    v.code = load.code;
    if (location.convention == "cpython") {
      // perf_jit_trampoline.c overwrites the last 8 dumped bytes (all of shorter code) with a
      // per-process marker so perf's build-ids differ; the live code is unchanged.
      v.salted_code_tail = static_cast<uint32_t>(std::min<uint64_t>(8, load.code_size));
    }
    index_->Add(v);
    const size_t added = index_->size() - 1;
    by_code_index_[load.code_index] = added;
    auto it = debug_.find(load.code_addr);
    if (it != debug_.end()) {
      tables_.push_back({added, v.start, v.size, std::move(it->second)});
      debug_.erase(it);
    }
  }

  void OnCodeMove(const JitdumpCodeMove& move) override {
    ++stats_->moves;
    AddMove(move);
  }

  void OnDebugInfo(const JitdumpDebugInfo& info) override {
    ++stats_->debug_infos;
    // perf applies a DEBUG_INFO to the next CODE_LOAD; keyed by code_addr so interleaved writers
    // still pair correctly. A second one for the same address replaces the first.
    debug_[info.code_addr] = info.entries;
  }

  void Finish();

 private:
  void BuildLineTable(const PendingTable& table, bool shift);
  void AddMove(const JitdumpCodeMove& move);

  std::string_view path_;
  uint32_t source_;
  SymbolIndex* index_;
  Diagnostics* diagnostics_;
  JitdumpStats* stats_;
  // Progress for done_with_, every 16 MB of CODE_LOADs (the bulk of a dump).
  static constexpr uint64_t kDoneStep = uint64_t{16} << 20;
  const std::function<void(size_t)>& done_with_;
  uint64_t next_done_ = kDoneStep;
  std::unordered_map<uint64_t, std::vector<JitdumpDebugEntry>> debug_;
  std::vector<PendingTable> tables_;
  std::vector<MovedVersion> moved_;
  // code_index -> load order of the latest version of that code.
  std::unordered_map<uint64_t, size_t> by_code_index_;
  // Scratch for BuildLineTable, reused across tables; file URLs with percent escapes decoded
  // into decoded_, kept in decoded_files_ (which never moves its strings) until the table is set.
  std::vector<std::string_view> files_;
  std::vector<LineEntry> lines_;
  std::string decoded_;
  std::deque<std::string> decoded_files_;
};

void IndexBuilder::BuildLineTable(const PendingTable& table, bool shift) {
  files_.clear();
  lines_.clear();
  decoded_files_.clear();
  const uint64_t delta = shift ? kElfHeaderOffset : 0;
  bool lead = false;
  for (const JitdumpDebugEntry& e : table.entries) {
    LineEntry line;
    if (e.addr < table.start || e.addr - table.start < delta) {
      // A lead entry (JudgeShift lets at most one through) covers the code from its start; an
      // entry of the code's own at the start replaces it below.
      line.addr = table.start;
      lead = true;
    } else {
      line.addr = e.addr - delta;
    }
    line.line_no = e.line_no;
    line.discriminator = e.discriminator;
    if (e.line_no == 0 && e.file.empty() && !lines_.empty()) {
      // BEAMJIT ends its tables so: the previous row stops here. Kept as a line-0 row of the
      // previous file, so no nameless file reaches the ELF image's file table.
      line.file_index = lines_.back().file_index;
      lines_.push_back(line);
      continue;
    }
    // V8 names a module's lines by its URL (Deno, ES modules): the path, as in its names.
    std::string_view name = FileUrlPath(e.file, &decoded_);
    if (name.data() == decoded_.data()) name = decoded_files_.emplace_back(decoded_);
    auto file = std::find(files_.begin(), files_.end(), name);
    line.file_index = static_cast<uint32_t>(file - files_.begin());
    if (file == files_.end()) files_.push_back(name);
    lines_.push_back(line);
  }
  std::stable_sort(lines_.begin(), lines_.end(),
                   [](const LineEntry& a, const LineEntry& b) { return a.addr < b.addr; });
  if (lead && lines_.size() > 1 && lines_[1].addr == table.start) lines_.erase(lines_.begin());
  index_->SetLineTable(table.version, files_, lines_);
  // The function's own location is its first row with a line (compiler-generated rows say 0).
  for (const LineEntry& line : lines_) {
    if (line.line_no != 0) {
      index_->SetSourceLine(table.version, files_[line.file_index], line.line_no);
      break;
    }
  }
}

void IndexBuilder::AddMove(const JitdumpCodeMove& move) {
  size_t base = SIZE_MAX;
  auto it = by_code_index_.find(move.code_index);
  if (it != by_code_index_.end()) {
    base = it->second;
  } else {
    for (size_t i = index_->size(); i-- > 0;) {
      const CodeVersion& v = index_->version(i);
      if (v.source() == source_ && v.start() == move.old_code_addr) {
        base = i;
        break;
      }
    }
  }
  if (base == SIZE_MAX) {
    diagnostics_->Warn("jitdump: move of unknown code",
                       std::string(path_) + ": offset " + std::to_string(move.prefix.file_offset) +
                           ": CODE_MOVE of code_index " + std::to_string(move.code_index) + " at " +
                           Hex(move.old_code_addr) + ", which no CODE_LOAD described");
    return;
  }
  // The base's line table may not be decided yet; Finish gives this version its moved copy.
  std::string raw_name;  // outlives Add
  CodeVersionSpec moved = index_->version(base).Spec(&raw_name);
  moved.start = move.new_code_addr;
  moved.size = move.code_size;
  moved.timestamp = move.prefix.timestamp;
  moved.code_index = move.code_index;
  if (moved.code.size() > moved.size) moved.code = moved.code.substr(0, moved.size);
  moved.files = {};
  moved.lines = {};
  index_->Add(moved);
  moved_.push_back({index_->size() - 1, base});
  by_code_index_[move.code_index] = index_->size() - 1;
}

void IndexBuilder::Finish() {
  // Decide the +0x40 quirk per line table; tables that fit either way follow the majority of
  // this dump's decisive tables.
  std::vector<Shift> shifts(tables_.size());
  int64_t votes_yes = 0, votes_no = 0;
  // Without decisive tables: a shifting writer leaves the first 0x40 bytes of every function
  // without entries and starts some table exactly at +0x40.
  bool any_entry_in_first_0x40 = false;
  bool any_table_at_0x40 = false;
  for (size_t i = 0; i < tables_.size(); ++i) {
    shifts[i] = JudgeShift(tables_[i]);
    if (shifts[i] == Shift::kYes) ++votes_yes;
    if (shifts[i] == Shift::kNo && !tables_[i].entries.empty()) ++votes_no;
    uint64_t lowest = UINT64_MAX;
    for (const JitdumpDebugEntry& e : tables_[i].entries) lowest = std::min(lowest, e.addr);
    if (tables_[i].entries.empty() || lowest < tables_[i].start) continue;
    if (lowest - tables_[i].start < kElfHeaderOffset) any_entry_in_first_0x40 = true;
    if (lowest - tables_[i].start == kElfHeaderOffset) any_table_at_0x40 = true;
  }
  const bool undecided_shift =
      votes_yes != votes_no ? votes_yes > votes_no : !any_entry_in_first_0x40 && any_table_at_0x40;
  for (size_t i = 0; i < tables_.size(); ++i) {
    PendingTable& table = tables_[i];
    bool shift = false;
    switch (shifts[i]) {
      case Shift::kNo:
        break;
      case Shift::kYes:
        shift = true;
        break;
      case Shift::kUndecided:
        shift = undecided_shift;
        break;
      case Shift::kNeither:
        // A table that fits its code under no reading is corrupt, not merely offset: Node
        // 20 under Valgrind writes some tables from freed memory (file names like "Y", every
        // other entry at a heap address). Its file names cannot be trusted either, so the
        // function keeps the location its name gives.
        diagnostics_->Warn("jitdump: line table outside code",
                           std::string(path_) + ": line table of " +
                               index_->version(table.version).raw_name() +
                               " has addresses outside its code [" + Hex(table.start) + ", " +
                               Hex(table.start + table.size) + "); ignored");
        table.entries.clear();
        ++stats_->debug_infos_dropped;
        break;
    }
    if (shift) ++stats_->debug_infos_shifted;
    if (!table.entries.empty()) BuildLineTable(table, shift);
  }
  // Moves in file order, so a move of moved code finds its base's table already moved.
  for (const MovedVersion& m : moved_) {
    const CodeVersion& base = index_->version(m.base);
    if (base.lines().empty()) continue;
    const uint64_t old_start = base.start();
    const uint64_t new_start = index_->version(m.version).start();
    lines_.assign(base.lines().begin(), base.lines().end());
    for (LineEntry& line : lines_) line.addr = line.addr - old_start + new_start;
    files_.assign(base.files().begin(), base.files().end());
    index_->SetLineTable(m.version, files_, lines_);
    index_->SetSourceLine(m.version, base.source_file(), base.source_line());
  }
  stats_->debug_infos_unmatched = static_cast<int64_t>(debug_.size());
  for (const auto& [code_addr, entries] : debug_) {
    diagnostics_->Warn("jitdump: unmatched debug info",
                       std::string(path_) + ": CODE_DEBUG_INFO for " + Hex(code_addr) +
                           " is followed by no CODE_LOAD of that address; ignored");
  }
  if (stats_->scan.timestamp_decreases > 0) {
    diagnostics_->Warn("jitdump: timestamps not monotonic",
                       std::string(path_) + ": " +
                           std::to_string(stats_->scan.timestamp_decreases) +
                           " records are older than the record before them (LLVM JITLink "
                           "writes so); file order is used as load order");
  }
}

}  // namespace

JitdumpStats ReadJitdump(std::string_view bytes, std::string_view path, uint32_t source,
                         SymbolIndex* index, Diagnostics* diagnostics,
                         const std::function<void(size_t)>& done_with) {
  JitdumpStats stats;
  IndexBuilder builder(path, source, index, diagnostics, &stats, done_with);
  stats.scan = ScanJitdump(bytes, path, &builder, diagnostics);
  builder.Finish();
  return stats;
}

}  // namespace cg_inject
