// CallgrindWriter: records back to Callgrind text (valgrind callgrind/docs/cl-format.xml).
//
// The writer mirrors its consumers' state machines so that what it leaves out is exactly what
// they will infer, and so that KCachegrind (libcore/cachegrindloader.cpp) and callgrind_annotate
// read the same profile although their rules differ:
// - Function ids. KCachegrind binds `fn=(N) name` (and cfn=/jfn= definitions) to the function
//   name + file + object in force where the id is defined; a later bare `(N)` means that function
//   whatever ob=/fl=/cob=/cfi= say then. callgrind_annotate binds an id to the name alone. So a
//   function id here stands for one (object, file, name), as in Callgrind, and a name that lives
//   in two objects or files gets two ids. Object and file ids are plain names for both.
// - Parts. KCachegrind forgets every id when a part starts; all ids are defined afresh in each
//   part, as Callgrind does with --combine-dumps=yes.
// - Files. For KCachegrind fl=, fi= and fe= all set the current file and fn= goes back to the
//   last fl= file; for callgrind_annotate a fi=/fe= left open carries into the next fn=. fl= is
//   written unless both already agree on the function's file. fi=/fe= are written when a
//   record's source file changes; a call or jump without cfi=/jfi= targets the current file
//   (fi=/fe= included) in both.
// - cob=/cfi= are written when a call target differs from those defaults (current ob, current
//   file), jfi=/jfn= likewise for jumps.
// Relative positions are based on the last position line, never on call or jump targets, and
// every function starts absolute, as Callgrind does, so the output also reads the same in tools
// that reset at fn=. Columns of unknown kind (e.g. qt-creator's `memAddr`) are always absolute
// hex: callgrind_annotate mistakes a decimal second column for a line number.
#include "callgrind/callgrind_writer.h"

#include <charconv>
#include <cstring>

#include "cg_inject/io.h"

namespace cg_inject {
namespace {

constexpr size_t kFlushSize = size_t{1} << 20;
constexpr uint32_t kMaxCachedId = 1 << 24;

size_t DecimalDigits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

size_t HexDigits(uint64_t v) {
  size_t n = 1;
  while (v >= 16) {
    v >>= 4;
    ++n;
  }
  return n;
}

bool LooksCompressed(std::string_view name) {
  return name.size() >= 2 && name[0] == '(' && name[1] >= '0' && name[1] <= '9';
}

}  // namespace

CallgrindWriter::CallgrindWriter(ByteSink* out, CallgrindWriterOptions options)
    : out_(out), options_(options) {
  // Sized once; used_ tracks the filled prefix, so appends are plain stores (no per-append
  // capacity bookkeeping of std::string, which showed up at 5% in the profile).
  buffer_.resize(kFlushSize + 65536);
}

CallgrindWriter::~CallgrindWriter() = default;

void CallgrindWriter::Flush() {
  if (used_ == 0) return;
  out_->Write(std::string_view(buffer_.data(), used_));
  used_ = 0;
}

char* CallgrindWriter::Room(size_t n) {
  if (used_ + n > buffer_.size()) {
    Flush();
    if (n > buffer_.size()) buffer_.resize(n);  // a name longer than the block
  }
  return buffer_.data() + used_;
}

void CallgrindWriter::Put(std::string_view text) {
  char* p = Room(text.size());
  std::memcpy(p, text.data(), text.size());
  used_ += text.size();
}

void CallgrindWriter::PutChar(char c) {
  *Room(1) = c;
  ++used_;
}

void CallgrindWriter::AppendUnsigned(uint64_t value) {
  char* p = Room(24);
  used_ += static_cast<size_t>(std::to_chars(p, p + 24, value).ptr - p);
}

void CallgrindWriter::AppendHex(uint64_t value) {
  char* p = Room(24);
  p[0] = '0';
  p[1] = 'x';
  used_ += 2 + static_cast<size_t>(std::to_chars(p + 2, p + 24, value, 16).ptr - (p + 2));
}

void CallgrindWriter::OnPartBegin(int part_index) {
  if (!wrote_anything_) {
    Put("# callgrind format\n");
    wrote_anything_ = true;
  } else if (part_index > 0) {
    // Parts are told apart by header lines that follow body lines. A part whose body held only
    // name lines (no records) would leave no body line and merge with the next part, so give it
    // an empty fl=, which sets no record (fuzzer find).
    if (!body_written_) Put("fl=\n");
    PutChar('\n');
  }
  body_written_ = false;
  current_ = Current{};
  for (int space = 0; space < 2; ++space) {
    ids_[space].clear();
    cache_[space].clear();
  }
  function_ids_.clear();
  function_cache_.clear();
  has_last_ = false;
  last_ = Position{};
}

void CallgrindWriter::OnHeader(std::string_view key, std::string_view value) {
  Put(key);
  PutChar(':');
  if (!value.empty()) {
    PutChar(' ');
    Put(value);
  }
  PutChar('\n');
}

void CallgrindWriter::OnLayout(const PartLayout& layout) {
  layout_ = layout.positions;
  PutChar('\n');
}

void CallgrindWriter::AppendCompressed(std::string_view name, uint32_t id, bool known) {
  if (id == 0) {
    Put(name);
  } else {
    PutChar('(');
    AppendUnsigned(id);
    PutChar(')');
    if (!known) {
      PutChar(' ');
      Put(name);
    }
  }
  PutChar('\n');
}

void CallgrindWriter::AppendName(std::string_view tag, Space space, const Name& full_name) {
  std::string_view name = full_name.text;
  Put(tag);
  PutChar('=');
  // An empty name cannot be compressed: "(3)" alone would read as a reference.
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    AppendCompressed(name, 0, false);
    return;
  }
  // Hashing every name was 16% of a rewrite; Name::id (dense, from the reader) indexes a cache
  // of map entries instead. The text is compared anyway, so ids from another producer that
  // happen to collide only cost a miss.
  auto& cache = cache_[space];
  if (full_name.id < cache.size()) {
    const IdEntry* entry = cache[full_name.id];
    if (entry != nullptr && entry->first == name) {
      AppendCompressed(name, entry->second, true);
      return;
    }
  }
  auto& ids = ids_[space];
  auto it = ids.find(name);
  bool known = it != ids.end();
  if (!known) it = ids.emplace(std::string(name), static_cast<uint32_t>(ids.size() + 1)).first;
  if (full_name.id < kMaxCachedId) {
    if (full_name.id >= cache.size()) cache.resize(full_name.id + full_name.id / 2 + 64, nullptr);
    cache[full_name.id] = &*it;
  }
  AppendCompressed(name, it->second, known);
}

size_t CallgrindWriter::FunctionIdKeyHash::operator()(const FunctionIdKey& k) const {
  std::hash<std::string_view> h;
  size_t seed = h(k.function);
  seed ^= h(k.file) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(k.object) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

void CallgrindWriter::AppendFunction(std::string_view tag, const Name& object, const Name& file,
                                     const Name& function) {
  std::string_view name = function.text;
  Put(tag);
  PutChar('=');
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    AppendCompressed(name, 0, false);
    return;
  }
  // Fast path: the slot of this function name remembers the (object, file) of its last use; a
  // function is nearly always written in one context, so the triple is hashed about once.
  if (function.id < function_cache_.size()) {
    const FunctionIdCacheSlot& slot = function_cache_[function.id];
    if (slot.key != nullptr && slot.object_id == object.id && slot.file_id == file.id &&
        slot.key->function == name && slot.key->object == object.text &&
        slot.key->file == file.text) {
      AppendCompressed(name, slot.writer_id, true);
      return;
    }
  }
  FunctionIdKey key{std::string(object.text), std::string(file.text), std::string(name)};
  auto [it, inserted] =
      function_ids_.try_emplace(std::move(key), static_cast<uint32_t>(function_ids_.size() + 1));
  if (function.id < kMaxCachedId) {
    if (function.id >= function_cache_.size())
      function_cache_.resize(function.id + function.id / 2 + 64);
    function_cache_[function.id] = {object.id, file.id, it->second, &it->first};
  }
  AppendCompressed(name, it->second, !inserted);
}

void CallgrindWriter::OnFunction(const FunctionContext& function) {
  body_written_ = true;
  PutChar('\n');
  if (function.object.id != 0 &&
      (!current_.has_object || current_.object != function.object.text)) {
    AppendName("ob", kObjects, function.object);
    current_.object.assign(function.object.text);
    current_.has_object = true;
  }
  // KCachegrind gives fn= the last fl= file, callgrind_annotate the current one (fi=/fe=
  // included): fl= unless both already name the function's file.
  if (function.file.id != 0 && (!current_.has_fl || current_.fl_file != function.file.text ||
                                current_.source_file != function.file.text)) {
    AppendName("fl", kFiles, function.file);
    current_.has_file = current_.has_fl = true;
    current_.fl_file.assign(function.file.text);
  }
  if (function.file.id != 0) {
    current_.file.assign(function.file.text);
    current_.source_file.assign(function.file.text);
  } else {
    current_.file = current_.source_file;
  }
  // The reader's object and file persist from function to function, so id 0 here means none
  // was ever named in this part: both consumers then use the empty name too.
  AppendFunction("fn", function.object, function.file, function.function);
  current_.object_id = function.object.id;
  current_.function.assign(function.function.text);
  has_last_ = false;
}

void CallgrindWriter::SwitchSourceFile(const Name& file) {
  if (file.id == 0) return;
  if (current_.has_file && current_.source_file == file.text) return;
  bool back_to_function_file = current_.has_file && current_.file == file.text;
  AppendName(back_to_function_file ? "fe" : "fi", kFiles, file);
  current_.source_file.assign(file.text);
  current_.has_file = true;
}

void CallgrindWriter::AppendPosition(const Position& pos, bool update) {
  for (int col = 0; col < layout_.count; ++col) {
    if (col > 0) PutChar(' ');
    PositionKind kind = layout_.kinds[col];
    uint64_t v = pos.values[col];
    if (kind == PositionKind::kOther) {
      AppendHex(v);
      continue;
    }
    bool is_line = kind == PositionKind::kLine;
    if (options_.compress_positions && has_last_) {
      uint64_t base = last_.values[col];
      if (v == base) {
        PutChar('*');
        continue;
      }
      uint64_t diff = v > base ? v - base : base - v;
      size_t absolute_size = is_line ? DecimalDigits(v) : 2 + HexDigits(v);
      if (1 + DecimalDigits(diff) < absolute_size) {
        PutChar(v > base ? '+' : '-');
        AppendUnsigned(diff);
        continue;
      }
    }
    if (is_line) {
      AppendUnsigned(v);
    } else {
      AppendHex(v);
    }
  }
  if (update) {
    last_ = pos;
    has_last_ = true;
  }
}

void CallgrindWriter::AppendCosts(std::span<const uint64_t> costs) {
  // Trailing zero costs may be left out (cl-format.xml); Callgrind does the same.
  size_t n = costs.size();
  while (n > 1 && costs[n - 1] == 0) --n;
  if (n == 0) {
    Put(" 0");
    return;
  }
  // One Room() for the whole list: each cost needs at most 1 + 20 bytes.
  char* start = Room(n * 21);
  char* p = start;
  for (size_t i = 0; i < n; ++i) {
    *p++ = ' ';
    p = std::to_chars(p, p + 20, costs[i]).ptr;
  }
  used_ += static_cast<size_t>(p - start);
}

void CallgrindWriter::OnCost(const CostRecord& cost) {
  body_written_ = true;
  SwitchSourceFile(cost.source_file);
  AppendPosition(cost.position, true);
  AppendCosts(cost.costs);
  PutChar('\n');
  if (used_ >= kFlushSize) Flush();
}

void CallgrindWriter::OnCall(const CallRecord& call) {
  body_written_ = true;
  SwitchSourceFile(call.source_file);
  if (call.target_object.id != 0 &&
      (!current_.has_object || current_.object != call.target_object.text)) {
    AppendName("cob", kObjects, call.target_object);
  }
  if (call.target_file.id != 0 &&
      (!current_.has_file || current_.source_file != call.target_file.text)) {
    AppendName("cfi", kFiles, call.target_file);
  }
  // The reader resolved the defaults, and cob=/cfi= above make the consumer's context equal to
  // this triple, which is what KCachegrind binds a new id to.
  AppendFunction("cfn", call.target_object, call.target_file, call.target_function);
  Put("calls=");
  AppendUnsigned(call.count);
  PutChar(' ');
  AppendPosition(call.target, false);
  PutChar('\n');
  AppendPosition(call.source, true);
  AppendCosts(call.inclusive);
  PutChar('\n');
  if (used_ >= kFlushSize) Flush();
}

void CallgrindWriter::OnJump(const JumpRecord& jump) {
  body_written_ = true;
  SwitchSourceFile(jump.source_file);
  if (jump.target_file.id != 0 &&
      (!current_.has_file || current_.source_file != jump.target_file.text)) {
    AppendName("jfi", kFiles, jump.target_file);
  }
  if (jump.target_function.id != 0 && current_.function != jump.target_function.text)
    AppendFunction("jfn", Name{current_.object_id, current_.object}, jump.target_file,
                   jump.target_function);
  if (jump.conditional) {
    Put("jcnd=");
    AppendUnsigned(jump.followed);
    PutChar('/');
    AppendUnsigned(jump.executed);
  } else {
    Put("jump=");
    AppendUnsigned(jump.followed);
  }
  PutChar(' ');
  AppendPosition(jump.target, false);
  PutChar('\n');
  AppendPosition(jump.source, true);
  PutChar('\n');
  if (used_ >= kFlushSize) Flush();
}

void CallgrindWriter::OnPartEnd() { Flush(); }

}  // namespace cg_inject
