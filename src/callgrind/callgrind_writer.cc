// CallgrindWriter: records back to Callgrind text (valgrind callgrind/docs/cl-format.xml).
//
// The writer mirrors the reader's state machine so that what it leaves out is exactly what the
// reader will infer: fl= is written when the function's file differs from the reader's current
// source file (fn= takes that file), fi=/fe= when a record's source file changes, cob=/cfi= when
// a call target differs from the defaults (current ob, current source file), jfi=/jfn= likewise
// for jumps. Relative positions are based on the last position line, never on call or jump
// targets, and every function starts absolute, as Callgrind does, so the output also reads the
// same in tools that reset at fn=. Columns of unknown kind (e.g. qt-creator's `memAddr`) are
// always absolute hex: callgrind_annotate mistakes a decimal second column for a line number.
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

void CallgrindWriter::AppendName(std::string_view tag, Space space, const Name& full_name) {
  std::string_view name = full_name.text;
  Put(tag);
  PutChar('=');
  // An empty name cannot be compressed: "(3)" alone would read as a reference.
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    Put(name);
    PutChar('\n');
    return;
  }
  // Hashing every name was 16% of a rewrite; Name::id (dense, from the reader) indexes a cache
  // of map entries instead. The text is compared anyway, so ids from another producer that
  // happen to collide only cost a miss.
  PutChar('(');
  auto& cache = cache_[space];
  if (full_name.id < cache.size()) {
    const IdEntry* entry = cache[full_name.id];
    if (entry != nullptr && entry->first == name) {
      AppendUnsigned(entry->second);
      Put(")\n");
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
  uint32_t id = it->second;
  if (known) {
    AppendUnsigned(id);
    Put(")\n");
    return;
  }
  AppendUnsigned(id);
  Put(") ");
  Put(name);
  PutChar('\n');
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
  // fn= takes the reader's current source file (fi=/fe= included) as the function's file.
  if (function.file.id != 0 && (!current_.has_file || current_.source_file != function.file.text)) {
    AppendName("fl", kFiles, function.file);
    current_.has_file = true;
  }
  if (function.file.id != 0) {
    current_.file.assign(function.file.text);
    current_.source_file.assign(function.file.text);
  } else {
    current_.file = current_.source_file;
  }
  AppendName("fn", kFunctions, function.function);
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
  AppendName("cfn", kFunctions, call.target_function);
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
    AppendName("jfn", kFunctions, jump.target_function);
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
