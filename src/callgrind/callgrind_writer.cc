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

#include "cg_inject/io.h"

namespace cg_inject {
namespace {

constexpr size_t kFlushSize = size_t{1} << 20;

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
  buffer_.reserve(kFlushSize + 4096);
}

CallgrindWriter::~CallgrindWriter() = default;

void CallgrindWriter::Flush() {
  if (buffer_.empty()) return;
  out_->Write(buffer_);
  buffer_.clear();
}

void CallgrindWriter::AppendUnsigned(uint64_t value) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof digits, value);
  buffer_.append(digits, static_cast<size_t>(result.ptr - digits));
}

void CallgrindWriter::AppendHex(uint64_t value) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof digits, value, 16);
  buffer_ += "0x";
  buffer_.append(digits, static_cast<size_t>(result.ptr - digits));
}

void CallgrindWriter::OnPartBegin(int part_index) {
  if (!wrote_anything_) {
    buffer_ += "# callgrind format\n";
    wrote_anything_ = true;
  } else if (part_index > 0) {
    buffer_ += '\n';
  }
  current_ = Current{};
  has_last_ = false;
  last_ = Position{};
}

void CallgrindWriter::OnHeader(std::string_view key, std::string_view value) {
  buffer_.append(key);
  buffer_ += ':';
  if (!value.empty()) {
    buffer_ += ' ';
    buffer_.append(value);
  }
  buffer_ += '\n';
}

void CallgrindWriter::OnLayout(const PartLayout& layout) {
  layout_ = layout.positions;
  buffer_ += '\n';
}

void CallgrindWriter::AppendName(std::string_view tag, Space space, std::string_view name) {
  buffer_.append(tag);
  buffer_ += '=';
  // An empty name cannot be compressed: "(3)" alone would read as a reference.
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    buffer_.append(name);
    buffer_ += '\n';
    return;
  }
  auto& ids = ids_[space];
  auto it = ids.find(name);
  buffer_ += '(';
  if (it != ids.end()) {
    AppendUnsigned(it->second);
    buffer_ += ")\n";
    return;
  }
  uint32_t id = static_cast<uint32_t>(ids.size() + 1);
  ids.emplace(std::string(name), id);
  AppendUnsigned(id);
  buffer_ += ") ";
  buffer_.append(name);
  buffer_ += '\n';
}

void CallgrindWriter::OnFunction(const FunctionContext& function) {
  buffer_ += '\n';
  if (function.object.id != 0 &&
      (!current_.has_object || current_.object != function.object.text)) {
    AppendName("ob", kObjects, function.object.text);
    current_.object.assign(function.object.text);
    current_.has_object = true;
  }
  // fn= takes the reader's current source file as the function's file.
  if (function.file.id != 0 && (!current_.has_file || current_.source_file != function.file.text)) {
    AppendName("fl", kFiles, function.file.text);
    current_.has_file = true;
  }
  if (function.file.id != 0) {
    current_.file.assign(function.file.text);
    current_.source_file.assign(function.file.text);
  } else {
    current_.file = current_.source_file;
  }
  AppendName("fn", kFunctions, function.function.text);
  current_.function.assign(function.function.text);
  has_last_ = false;
}

void CallgrindWriter::SwitchSourceFile(const Name& file) {
  if (file.id == 0) return;
  if (current_.has_file && current_.source_file == file.text) return;
  bool back_to_function_file = current_.has_file && current_.file == file.text;
  AppendName(back_to_function_file ? "fe" : "fi", kFiles, file.text);
  current_.source_file.assign(file.text);
  current_.has_file = true;
}

void CallgrindWriter::AppendPosition(const Position& pos, bool update) {
  for (int col = 0; col < layout_.count; ++col) {
    if (col > 0) buffer_ += ' ';
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
        buffer_ += '*';
        continue;
      }
      uint64_t diff = v > base ? v - base : base - v;
      size_t absolute_size = is_line ? DecimalDigits(v) : 2 + HexDigits(v);
      if (1 + DecimalDigits(diff) < absolute_size) {
        buffer_ += v > base ? '+' : '-';
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
    buffer_ += " 0";
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    buffer_ += ' ';
    AppendUnsigned(costs[i]);
  }
}

void CallgrindWriter::OnCost(const CostRecord& cost) {
  SwitchSourceFile(cost.source_file);
  AppendPosition(cost.position, true);
  AppendCosts(cost.costs);
  buffer_ += '\n';
  if (buffer_.size() >= kFlushSize) Flush();
}

void CallgrindWriter::OnCall(const CallRecord& call) {
  SwitchSourceFile(call.source_file);
  if (call.target_object.id != 0 &&
      (!current_.has_object || current_.object != call.target_object.text)) {
    AppendName("cob", kObjects, call.target_object.text);
  }
  if (call.target_file.id != 0 &&
      (!current_.has_file || current_.source_file != call.target_file.text)) {
    AppendName("cfi", kFiles, call.target_file.text);
  }
  AppendName("cfn", kFunctions, call.target_function.text);
  buffer_ += "calls=";
  AppendUnsigned(call.count);
  buffer_ += ' ';
  AppendPosition(call.target, false);
  buffer_ += '\n';
  AppendPosition(call.source, true);
  AppendCosts(call.inclusive);
  buffer_ += '\n';
  if (buffer_.size() >= kFlushSize) Flush();
}

void CallgrindWriter::OnJump(const JumpRecord& jump) {
  SwitchSourceFile(jump.source_file);
  if (jump.target_file.id != 0 &&
      (!current_.has_file || current_.source_file != jump.target_file.text)) {
    AppendName("jfi", kFiles, jump.target_file.text);
  }
  if (jump.target_function.id != 0 && current_.function != jump.target_function.text)
    AppendName("jfn", kFunctions, jump.target_function.text);
  if (jump.conditional) {
    buffer_ += "jcnd=";
    AppendUnsigned(jump.followed);
    buffer_ += '/';
    AppendUnsigned(jump.executed);
  } else {
    buffer_ += "jump=";
    AppendUnsigned(jump.followed);
  }
  buffer_ += ' ';
  AppendPosition(jump.target, false);
  buffer_ += '\n';
  AppendPosition(jump.source, true);
  buffer_ += '\n';
  if (buffer_.size() >= kFlushSize) Flush();
}

void CallgrindWriter::OnPartEnd() { Flush(); }

}  // namespace cg_inject
