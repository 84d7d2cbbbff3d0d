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
// Input text. Records carry the text they were read from (profile.h `raw`); when nothing changed
// it is copied, which is faster and keeps a profile no source touched byte-identical. A copy is
// made only when it reads the same as the formatted record would, in both consumers:
// - Ids. Callgrind's ids are counters over the whole file, so the copied lines' ids are adopted:
//   a definition `(7) x` is copied only if output id 7 is free or already x (for functions: the
//   same object, file and name), a reference `(7)` only if output id 7 is x. Formatted names
//   take the id their input line had when it is free; a name the input never numbered gets an
//   id above every id seen so far. The input may define that id later (Callgrind counts ids up
//   through the whole file); the check then formats those lines, which reads right but is no
//   longer a copy. With the injector's synthesized blocks at the end of a part that is rare.
// - Context. ob=, fl=, fi= as the copied lines leave them must be the record's object and files,
//   by the file rules below, and cob/cfi/jfi defaults must come out as the record's targets.
// - Positions. The input's relative positions are based on the input's previous position line
//   (`raw_base`); the copy is made only when the output's previous position line is the same.
// - Shapes. Only what Callgrind writes is copied (raw_lines.h): no indented or CRLF lines, no
//   spec-form jcnd=; blank and comment lines only before a record. Anything else is formatted.
// Relative positions are based on the last position line, never on call or jump targets, and
// every function starts absolute, as Callgrind does, so the output also reads the same in tools
// that reset at fn=. Columns of unknown kind (e.g. qt-creator's `memAddr`) are always absolute
// hex: callgrind_annotate mistakes a decimal second column for a line number.
#include "callgrind/callgrind_writer.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>

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

// Equal texts. Names are interned by their producer, so the same view is the common case.
bool Same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

}  // namespace

CallgrindWriter::CallgrindWriter(ByteSink* out, CallgrindWriterOptions options)
    : out_(out),
      options_(options),
      copy_input_(options.copy_input && options.compress_names && options.compress_positions) {
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

void CallgrindWriter::MakeRoom(size_t n) {
  Flush();
  if (n > buffer_.size()) buffer_.resize(n);  // a name longer than the block
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

void CallgrindWriter::BeginFormatted() {
  if (need_marker_) {
    Put("# callgrind format\n");
    need_marker_ = false;
  }
  for (; pending_blanks_ > 0; --pending_blanks_) PutChar('\n');
}

void CallgrindWriter::CopyRaw(std::string_view raw, bool starts_with_marker) {
  if (need_marker_) {
    if (!starts_with_marker) Put("# callgrind format\n");
    need_marker_ = false;
  }
  pending_blanks_ = 0;  // the input text has its own
  copied_ = true;
  Put(raw);
}

void CallgrindWriter::OnPartBegin(int part_index) {
  if (!wrote_anything_) {
    wrote_anything_ = true;
  } else if (part_index > 0) {
    // Parts are told apart by header lines that follow body lines. A part whose body held only
    // name lines (no records) would leave no body line and merge with the next part, so give it
    // an empty fl=, which sets no record (fuzzer find).
    if (!body_written_) {
      BeginFormatted();
      Put("fl=\n");
    }
    ++pending_blanks_;
  }
  body_written_ = false;
  copied_ = false;
  for (uint32_t& m : max_input_id_) m = 0;
  current_ = Current{};
  for (int space = 0; space < 2; ++space) {
    ids_[space].clear();
    names_by_id_[space].clear();
  }
  function_ids_.clear();
  functions_by_id_.clear();
  // A part may come from another producer (a writer fed by two readers in turn), whose names
  // could sit where freed ones were: the pointer check of TextId holds within a part only.
  text_cache_.clear();
  for (uint32_t& m : max_id_) m = 0;
  has_last_ = false;
  last_ = Position{};
}

void CallgrindWriter::OnRawHeader(std::string_view key, std::string_view value,
                                  std::string_view raw) {
  if (copy_input_ && !raw.empty() && ParseRaw(raw, RawKind::kHeader)) {
    // totals: may follow the fe= that closes the part's last function (no record after it).
    const RawName& fi = raw_[RawKey::kFi];
    std::string_view file;
    if (!fi.present || ClosingFile(fi, &file)) {
      if (fi.present) {
        BindRawName(kFiles, fi);
        current_.source_file = texts_.Intern(file).text;  // `file` may view the input buffer
        current_.has_file = true;
      }
      CopyRaw(raw, raw_.starts_with_marker);
      return;
    }
  }
  OnHeader(key, value);
}

void CallgrindWriter::OnHeader(std::string_view key, std::string_view value) {
  BeginFormatted();
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
  ++pending_blanks_;
}

void CallgrindWriter::PutName(std::string_view name) {
  // A name from a symbol source may hold a line break (a jitdump's name or line-table file is
  // any bytes up to a NUL). Readers end a line at \n and drop one \r before it, so a \n, and a
  // \r that ends the name, are written as the two characters \n or \r. A \r inside a name reads
  // back as itself: input names may hold one and keep it.
  const bool trailing_cr = !name.empty() && name.back() == '\r';
  if (trailing_cr) name.remove_suffix(1);
  while (!name.empty()) {
    const void* found = std::memchr(name.data(), '\n', name.size());
    if (found == nullptr) break;
    size_t at = static_cast<size_t>(static_cast<const char*>(found) - name.data());
    Put(name.substr(0, at));
    Put("\\n");
    name.remove_prefix(at + 1);
  }
  Put(name);
  if (trailing_cr) Put("\\r");
}

void CallgrindWriter::AppendCompressed(std::string_view name, uint32_t id, bool known) {
  if (id == 0) {
    PutName(name);
  } else {
    PutChar('(');
    AppendUnsigned(id);
    PutChar(')');
    if (!known) {
      PutChar(' ');
      PutName(name);
    }
  }
  PutChar('\n');
}

uint32_t CallgrindWriter::TextId(const Name& name) {
  if (text_cache_.empty()) text_cache_.resize(kTextCacheSlots);
  TextCacheSlot& slot = text_cache_[name.id & (kTextCacheSlots - 1)];
  if (slot.data == name.text.data() && slot.size == name.text.size() && slot.text != 0)
    return slot.text;
  uint32_t text = texts_.Intern(name.text).id;
  if (name.text.size() <= UINT32_MAX)
    slot = TextCacheSlot{name.text.data(), static_cast<uint32_t>(name.text.size()), text};
  return text;
}

void CallgrindWriter::BindId(Space space, uint32_t id, std::string_view text) {
  Name stored = texts_.Intern(text);
  // A name keeps the id it had: the input may define a second id for it (try_emplace).
  auto [value, inserted] = ids_[space].try_emplace(stored.id);
  if (inserted) *value = id;
  names_by_id_[space].Bind(id) = NameSlot{stored.id, stored.text, {}};
  if (id > max_id_[space]) max_id_[space] = id;
}

void CallgrindWriter::BindFunctionId(uint32_t id, const FunctionKey& function) {
  // The slot first: the index may look up every id it holds while it inserts.
  functions_by_id_.Bind(id) = function;
  // A function keeps the id it had: the input may define a second id for it.
  function_ids_.insert(function, id);
  if (id > max_id_[2]) max_id_[2] = id;
}

bool CallgrindWriter::NameIdBound(Space space, uint32_t id) const {
  const NameSlot* slot = names_by_id_[space].Find(id);
  return slot != nullptr && slot->text != 0;
}

bool CallgrindWriter::FunctionIdBound(uint32_t id) const {
  const FunctionKey* slot = functions_by_id_.Find(id);
  return slot != nullptr && slot->function != 0;
}

uint32_t CallgrindWriter::NewId(Space space, std::string_view name, RawKey hint) {
  if (hints_ != nullptr) {
    const RawName& n = (*hints_)[hint];
    bool free = space == kFunctions ? !FunctionIdBound(n.id) : !NameIdBound(space, n.id);
    if (n.has_id && n.id != 0 && (!n.has_text || n.text == name) && free) return n.id;
  }
  return std::max(max_id_[space], max_input_id_[space]) + 1;
}

void CallgrindWriter::AppendName(std::string_view tag, Space space, const Name& full_name,
                                 RawKey hint) {
  std::string_view name = full_name.text;
  Put(tag);
  PutChar('=');
  // An empty name cannot be compressed: "(3)" alone would read as a reference.
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    AppendCompressed(name, 0, false);
    return;
  }
  uint32_t text = TextId(full_name);
  const uint32_t* found = ids_[space].find(text);
  uint32_t id;
  if (found != nullptr) {
    id = *found;
  } else {
    id = NewId(space, name, hint);
    BindId(space, id, name);
  }
  AppendCompressed(name, id, found != nullptr);
}

size_t CallgrindWriter::FunctionKeyHash::operator()(const FunctionKey& k) const {
  // FlatHashMap multiplies by a Fibonacci constant; mix first so each id moves the top bits.
  uint64_t h = (uint64_t{k.file} << 32 | k.function) ^ (uint64_t{k.object} * 0x9E3779B97F4A7C15ull);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  return size_t(h ^ (h >> 31));
}

void CallgrindWriter::AppendFunction(std::string_view tag, const Name& object, const Name& file,
                                     const Name& function, RawKey hint) {
  std::string_view name = function.text;
  Put(tag);
  PutChar('=');
  if (name.empty() || (!options_.compress_names && !LooksCompressed(name))) {
    AppendCompressed(name, 0, false);
    return;
  }
  FunctionKey key{TextId(object), TextId(file), TextId(function)};
  const uint32_t* found = function_ids_.find(key);
  uint32_t id;
  if (found != nullptr) {
    id = *found;
  } else {
    id = NewId(kFunctions, name, hint);
    BindFunctionId(id, key);
  }
  AppendCompressed(name, id, found != nullptr);
}

bool CallgrindWriter::ParseRaw(std::string_view raw, RawKind kind) {
  if (!ParseRawLines(raw, kind, &raw_)) return false;
  static constexpr Space kSpaceOf[] = {kObjects,   kFiles, kFiles,     kObjects,  kFiles,
                                       kFunctions, kFiles, kFunctions, kFunctions};
  static_assert(std::size(kSpaceOf) == size_t(RawKey::kCount));
  for (size_t key = 0; key < size_t(RawKey::kCount); ++key) {
    const RawName& n = raw_.names[key];
    if (!n.has_id) continue;
    // Callgrind numbers ids over the whole run, so they may start far above one: the tables
    // keep such ids in a hash map (id_slots.h), and every id is adopted.
    // at(): GCC cannot see that kSpaceOf holds only 0..2 (-Warray-bounds under ASan).
    uint32_t& seen = max_input_id_.at(kSpaceOf[key]);
    seen = std::max(seen, n.id);
  }
  return true;
}

bool CallgrindWriter::SameBase(const Position& base) const {
  for (int col = 0; col < layout_.count; ++col)
    if (base.values[col] != last_.values[col]) return false;
  return true;
}

namespace {
bool SameView(std::string_view a, std::string_view b) {
  return a.data() == b.data() && a.size() == b.size();
}
}  // namespace

bool CallgrindWriter::RawNameIs(Space space, const RawName& n, std::string_view text,
                                const RawName* earlier) {
  if (!n.has_id) return n.text == text;
  if (n.has_text && n.text != text) return false;
  // "fi=(22) ???" then "cfi=(22)": defined a line earlier in the same text.
  if (!n.has_text && earlier != nullptr && earlier->has_id && earlier->has_text &&
      earlier->id == n.id)
    return earlier->text == text;
  if (!NameIdBound(space, n.id)) return n.has_text;  // a free id
  NameSlot& slot = *names_by_id_[space].Find(n.id);
  // Only references are remembered: a definition's text is a view into the input buffer.
  if (n.has_text) return slot.stored == text;
  if (SameView(slot.seen, text)) return true;
  if (slot.stored != text) return false;
  slot.seen = text;
  return true;
}

bool CallgrindWriter::RawFunctionIs(const RawName& n, const Name& object, const Name& file,
                                    const Name& function) {
  if (!n.has_id) return n.text == function.text;
  if (n.has_text && n.text != function.text) return false;
  if (!FunctionIdBound(n.id)) return n.has_text;
  const FunctionKey& bound = functions_by_id_[n.id];
  return bound.function == TextId(function) && bound.object == TextId(object) &&
         bound.file == TextId(file);
}

bool CallgrindWriter::RawSourceFileIs(const RawName& fi, const Name& file) {
  if (fi.present) return file.id != 0 && RawNameIs(kFiles, fi, file.text);
  return file.id == 0 || (current_.has_file && Same(current_.source_file, file.text));
}

void CallgrindWriter::UseRawSourceFile(const RawName& fi, const Name& file) {
  if (!fi.present) return;
  BindRawName(kFiles, fi);
  current_.source_file = file.text;
  current_.has_file = true;
}

bool CallgrindWriter::ClosingFile(const RawName& fi, std::string_view* file) {
  // The previous function's closing fe=: not a record field, so look its file up.
  if (fi.has_id && !fi.has_text) {
    if (!NameIdBound(kFiles, fi.id)) return false;
    *file = names_by_id_[kFiles][fi.id].stored;
  } else if (!fi.has_id || RawNameIs(kFiles, fi, fi.text)) {
    *file = fi.text;
  } else {
    return false;
  }
  return true;
}

bool CallgrindWriter::CopyFunction(const FunctionContext& f) {
  const RawName& ob = raw_[RawKey::kOb];
  const RawName& fl = raw_[RawKey::kFl];
  const RawName& fn = raw_[RawKey::kFn];
  const RawName& fi = raw_[RawKey::kFi];
  // The object and the files both consumers have once the copied lines are read.
  bool has_object = current_.has_object;
  std::string_view object = current_.object.text;
  if (ob.present) {
    if (!RawNameIs(kObjects, ob, f.object.text)) return false;
    has_object = true;
    object = f.object.text;
  }
  if (f.object.id == 0 ? has_object : !has_object || !Same(object, f.object.text)) return false;
  bool has_fl = current_.has_fl, has_file = current_.has_file;
  std::string_view fl_file = current_.fl_file, source_file = current_.source_file;
  if (fi.present) {
    if (!ClosingFile(fi, &source_file)) return false;
    has_file = true;
  }
  if (fl.present) {
    if (!RawNameIs(kFiles, fl, f.file.text)) return false;
    has_fl = has_file = true;
    fl_file = source_file = f.file.text;
  }
  if (f.file.id == 0 ? has_fl || has_file
                     : !has_fl || !Same(fl_file, f.file.text) || !Same(source_file, f.file.text))
    return false;
  if (!RawFunctionIs(fn, f.object, f.file, f.function)) return false;

  BindRawName(kFiles, fi);
  BindRawName(kObjects, ob);
  BindRawName(kFiles, fl);
  if (fn.has_id && fn.has_text)
    BindFunctionId(fn.id, FunctionKey{TextId(f.object), TextId(f.file), TextId(f.function)});
  CopyRaw(f.raw, raw_.starts_with_marker);
  if (ob.present) {
    current_.object = f.object;
    current_.has_object = true;
  }
  if (fl.present) {
    current_.has_file = current_.has_fl = true;
    current_.fl_file = f.file.text;
  }
  return true;
}

void CallgrindWriter::OnFunction(const FunctionContext& function) {
  body_written_ = true;
  if (copy_input_ && !function.raw.empty()) {
    if (ParseRaw(function.raw, RawKind::kFunction)) {
      if (CopyFunction(function)) {
        if (function.file.id != 0) {
          current_.file = current_.source_file = function.file.text;
        } else {
          current_.file = current_.source_file;
        }
        current_.function = function.function.text;
        has_last_ = false;
        return;
      }
      hints_ = &raw_;
    }
  }
  BeginFormatted();
  PutChar('\n');
  if (function.object.id != 0 &&
      (!current_.has_object || !Same(current_.object.text, function.object.text))) {
    AppendName("ob", kObjects, function.object, RawKey::kOb);
    current_.object = function.object;
    current_.has_object = true;
  }
  // KCachegrind gives fn= the last fl= file, callgrind_annotate the current one (fi=/fe=
  // included): fl= unless both already name the function's file.
  std::string_view file = function.file.text;
  if (function.file.id != 0 &&
      (!current_.has_fl || !Same(current_.fl_file, file) || !Same(current_.source_file, file))) {
    AppendName("fl", kFiles, function.file, RawKey::kFl);
    current_.has_file = current_.has_fl = true;
    current_.fl_file = file;
  }
  if (function.file.id != 0) {
    current_.file = current_.source_file = file;
  } else {
    current_.file = current_.source_file;
  }
  // The reader's object and file persist from function to function, so id 0 here means none
  // was ever named in this part: both consumers then use the empty name too.
  AppendFunction("fn", function.object, function.file, function.function, RawKey::kFn);
  current_.function = function.function.text;
  has_last_ = false;
  hints_ = nullptr;
}

void CallgrindWriter::SwitchSourceFile(const Name& file) {
  if (file.id == 0) return;
  if (current_.has_file && Same(current_.source_file, file.text)) return;
  bool back_to_function_file = current_.has_file && Same(current_.file, file.text);
  AppendName(back_to_function_file ? "fe" : "fi", kFiles, file, RawKey::kFi);
  current_.source_file = file.text;
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

bool CallgrindWriter::CopyCost(const CostRecord& cost) {
  if (IsOnePositionLine(cost.raw)) {
    if (!SameBase(cost.raw_base)) return false;
    // The common case: no fi=/fe= line, so the current file must already be the record's.
    if (cost.source_file.id != 0 &&
        (!current_.has_file || !Same(current_.source_file, cost.source_file.text)))
      return false;
    CopyRaw(cost.raw, false);
    return true;
  }
  if (!ParseRaw(cost.raw, RawKind::kCost)) return false;
  hints_ = &raw_;
  const RawName& fi = raw_[RawKey::kFi];
  if (!SameBase(cost.raw_base) || !RawSourceFileIs(fi, cost.source_file)) return false;
  hints_ = nullptr;
  UseRawSourceFile(fi, cost.source_file);
  CopyRaw(cost.raw, raw_.starts_with_marker);
  return true;
}

void CallgrindWriter::OnCost(const CostRecord& cost) {
  body_written_ = true;
  if (copy_input_ && !cost.raw.empty()) {
    if (CopyCost(cost)) {
      last_ = cost.position;
      has_last_ = true;
      if (used_ >= kFlushSize) Flush();
      return;
    }
  }
  BeginFormatted();
  SwitchSourceFile(cost.source_file);
  hints_ = nullptr;
  AppendPosition(cost.position, true);
  AppendCosts(cost.costs);
  PutChar('\n');
  if (used_ >= kFlushSize) Flush();
}

bool CallgrindWriter::CopyCall(const CallRecord& call) {
  if (!ParseRaw(call.raw, RawKind::kCall)) return false;
  hints_ = &raw_;
  if (!SameBase(call.raw_base)) return false;
  const RawName& fi = raw_[RawKey::kFi];
  const RawName& cob = raw_[RawKey::kCob];
  const RawName& cfi = raw_[RawKey::kCfi];
  const RawName& cfn = raw_[RawKey::kCfn];
  if (!RawSourceFileIs(fi, call.source_file)) return false;
  // cob= and cfi= default to the current object and file (fi=/fe= of this text included).
  bool has_file = fi.present || current_.has_file;
  std::string_view file = fi.present ? call.source_file.text : current_.source_file;
  const Name& object = call.target_object;
  if (cob.present      ? object.id == 0 || !RawNameIs(kObjects, cob, object.text)
      : object.id == 0 ? current_.has_object
                       : !current_.has_object || !Same(current_.object.text, object.text))
    return false;
  const Name& target_file = call.target_file;
  if (cfi.present           ? target_file.id == 0 || !RawNameIs(kFiles, cfi, target_file.text, &fi)
      : target_file.id == 0 ? has_file
                            : !has_file || !Same(file, target_file.text))
    return false;
  if (!RawFunctionIs(cfn, object, target_file, call.target_function)) return false;

  hints_ = nullptr;
  UseRawSourceFile(fi, call.source_file);
  BindRawName(kObjects, cob);
  BindRawName(kFiles, cfi);
  if (cfn.has_id && cfn.has_text) {
    BindFunctionId(cfn.id,
                   FunctionKey{TextId(object), TextId(target_file), TextId(call.target_function)});
  }
  CopyRaw(call.raw, raw_.starts_with_marker);
  return true;
}

void CallgrindWriter::OnCall(const CallRecord& call) {
  body_written_ = true;
  if (copy_input_ && !call.raw.empty()) {
    if (CopyCall(call)) {
      last_ = call.source;
      has_last_ = true;
      if (used_ >= kFlushSize) Flush();
      return;
    }
  }
  BeginFormatted();
  SwitchSourceFile(call.source_file);
  if (call.target_object.id != 0 &&
      (!current_.has_object || !Same(current_.object.text, call.target_object.text))) {
    AppendName("cob", kObjects, call.target_object, RawKey::kCob);
  }
  if (call.target_file.id != 0 &&
      (!current_.has_file || !Same(current_.source_file, call.target_file.text))) {
    AppendName("cfi", kFiles, call.target_file, RawKey::kCfi);
  }
  // The reader resolved the defaults, and cob=/cfi= above make the consumer's context equal to
  // this triple, which is what KCachegrind binds a new id to.
  AppendFunction("cfn", call.target_object, call.target_file, call.target_function, RawKey::kCfn);
  hints_ = nullptr;
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

bool CallgrindWriter::CopyJump(const JumpRecord& jump) {
  if (!ParseRaw(jump.raw, RawKind::kJump)) return false;
  hints_ = &raw_;
  if (!SameBase(jump.raw_base)) return false;
  const RawName& fi = raw_[RawKey::kFi];
  const RawName& jfi = raw_[RawKey::kJfi];
  const RawName& jfn = raw_[RawKey::kJfn];
  if (!RawSourceFileIs(fi, jump.source_file)) return false;
  bool has_file = fi.present || current_.has_file;
  std::string_view file = fi.present ? jump.source_file.text : current_.source_file;
  const Name& target_file = jump.target_file;
  if (jfi.present           ? target_file.id == 0 || !RawNameIs(kFiles, jfi, target_file.text, &fi)
      : target_file.id == 0 ? has_file
                            : !has_file || !Same(file, target_file.text))
    return false;
  // jfn= defaults to the current function; a jfn= id is bound to the current object.
  if (jfn.present ? !RawFunctionIs(jfn, current_.object, target_file, jump.target_function)
                  : !Same(current_.function, jump.target_function.text))
    return false;

  hints_ = nullptr;
  UseRawSourceFile(fi, jump.source_file);
  BindRawName(kFiles, jfi);
  if (jfn.has_id && jfn.has_text) {
    BindFunctionId(jfn.id, FunctionKey{TextId(current_.object), TextId(target_file),
                                       TextId(jump.target_function)});
  }
  CopyRaw(jump.raw, raw_.starts_with_marker);
  return true;
}

void CallgrindWriter::OnJump(const JumpRecord& jump) {
  body_written_ = true;
  if (copy_input_ && !jump.raw.empty()) {
    if (CopyJump(jump)) {
      last_ = jump.source;
      has_last_ = true;
      if (used_ >= kFlushSize) Flush();
      return;
    }
  }
  BeginFormatted();
  SwitchSourceFile(jump.source_file);
  if (jump.target_file.id != 0 &&
      (!current_.has_file || !Same(current_.source_file, jump.target_file.text))) {
    AppendName("jfi", kFiles, jump.target_file, RawKey::kJfi);
  }
  if (jump.target_function.id != 0 && !Same(current_.function, jump.target_function.text))
    AppendFunction("jfn", current_.object, jump.target_file, jump.target_function, RawKey::kJfn);
  hints_ = nullptr;
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

void CallgrindWriter::OnPartEnd() {
  // Blank lines still owed end a part the writer formatted; copied text brought its own.
  if (need_marker_ || !copied_) BeginFormatted();
  pending_blanks_ = 0;
  Flush();
}

}  // namespace cg_inject
