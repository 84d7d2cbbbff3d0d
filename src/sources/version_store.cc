// The compact version records (see version_store.h) and CodeVersion's accessors, which decode
// them.
#include "sources/version_store.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <new>
#include <stdexcept>

namespace cg_inject {

VersionStore::~VersionStore() {
  for (char* chunk : chunks) ::operator delete (chunk, std::align_val_t{kChunkBytes});
}

bool VersionStore::IsAdopted(std::string_view bytes) const {
  if (bytes.empty()) return true;
  std::less<const char*> before;
  for (const Adopted& a : adopted) {
    const char* begin = a.bytes.data();
    const char* end = begin + a.bytes.size();
    if (!before(bytes.data(), begin) && !before(end, bytes.data() + bytes.size())) return true;
  }
  return false;
}

std::span<const std::string_view> VersionStore::KeepFiles(std::span<const std::string_view> files) {
  if (files.empty()) return {};
  auto* out =
      static_cast<std::string_view*>(arena.Allocate(files.size_bytes(), alignof(std::string_view)));
  for (size_t i = 0; i < files.size(); ++i)
    new (out + i) std::string_view(strings.Text(Intern(files[i])));
  return {out, files.size()};
}

void VersionStore::AppendSuffix(std::string* out, uint8_t kind, std::string_view file,
                                uint32_t line, uint32_t column) {
  auto number = [out](uint32_t n) {
    char digits[10];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
    out->push_back(':');
    out->append(digits, end);
  };
  if (kind == CodeVersion::kSuffixFileUrl) {
    out->append(" file://");
  } else {
    out->push_back(kind == CodeVersion::kSuffixSpace ? ' ' : ':');
  }
  out->append(file);
  if (line != 0) {
    number(line);
    if (column != 0) number(column);
  }
}

CodeVersion* VersionStore::Append(size_t i, const CodeVersionSpec& spec, uint32_t function_id) {
  if (spec.source > UINT16_MAX) throw std::length_error("more than 65535 symbol sources");
  if (i % kPerChunk == 0) {
    char* chunk = static_cast<char*>(::operator new (kChunkBytes, std::align_val_t{kChunkBytes}));
    chunks.push_back(chunk);
    new (chunk) ChunkHeader{this, i};
  }
  return Fill(i, spec, function_id);
}

CodeVersion* VersionStore::Fill(size_t i, const CodeVersionSpec& spec, uint32_t function_id) {
  CodeVersion* v = new (&at(i)) CodeVersion();
  v->start_ = spec.start;
  v->function_id_ = function_id;
  v->source_ = static_cast<uint16_t>(spec.source);
  v->line_ = spec.definition_line;
  v->file_ = Intern(spec.source_file);
  const bool side = spec.size >= CodeVersion::kSizeInSide || spec.timestamp != 0 ||
                    spec.code_index != 0 || !spec.code.empty() || !spec.files.empty() ||
                    !spec.lines.empty() || spec.salted_code_tail != 0 ||
                    spec.source_line != spec.definition_line;
  // A name that ends in the location it gave (V8's `LazyCompile:~f /app/f.js:12`, CPython's
  // `py::f:/app/f.py`) is stored without it: the interned file and the line rebuild it, and the
  // file part was half of every name in a big V8 map. Only for a readable name (display_name
  // then never needs the raw one) and without side record (see SideOf).
  const std::string_view raw = spec.raw_name;
  size_t head = raw.size();
  if (!side && v->file_ != 0 && !spec.function_name.empty()) {
    // Deno's `JS:*f file:///app/f.js:3:1` names the path `/app/f.js`: the URL is rebuilt.
    for (uint8_t kind :
         {CodeVersion::kSuffixSpace, CodeVersion::kSuffixColon, CodeVersion::kSuffixFileUrl}) {
      suffix_.clear();
      AppendSuffix(&suffix_, kind, spec.source_file, spec.definition_line, spec.definition_column);
      if (raw.size() > suffix_.size() && raw.ends_with(suffix_)) {
        head = raw.size() - suffix_.size();
        v->flags_ |= kind;
        break;
      }
    }
  }
  const std::string_view stored = arena.Copy(raw.substr(0, head));
  v->name_ = stored.data();
  v->name_size_ = static_cast<uint32_t>(stored.size());
  // A tag that ends the name whole (no suffix is cut off) is found again from the stored name
  // alone: a bit instead of another view per version.
  const std::string_view tag = spec.definition_tag;
  if (!tag.empty() && tag[0] == '#' && head == raw.size() && stored.ends_with(tag) &&
      stored.rfind('#') == stored.size() - tag.size())
    v->flags_ |= CodeVersion::kHasTag;
  // The readable name is usually a piece of the raw one (`LazyCompile:~f ...` gives `f`) and then
  // costs nothing more; made-up ones (`(anonymous)`) repeat and are interned. Any occurrence will
  // do: equal bytes are an equal name.
  const std::string_view function = spec.function_name;
  if (size_t at = function.empty() ? std::string_view::npos : stored.find(function);
      at != std::string_view::npos && at <= UINT16_MAX && function.size() <= UINT16_MAX) {
    v->function_offset_ = static_cast<uint16_t>(at);
    v->function_size_ = static_cast<uint16_t>(function.size());
  } else if (!function.empty()) {
    const uint32_t id = Intern(function);
    v->flags_ |= CodeVersion::kFunctionInterned;
    v->function_offset_ = static_cast<uint16_t>(id >> 16);
    v->function_size_ = static_cast<uint16_t>(id & 0xFFFF);
  }
  v->size_ = spec.size < CodeVersion::kSizeInSide ? static_cast<uint32_t>(spec.size)
                                                  : CodeVersion::kSizeInSide;
  if (!side) {
    v->column_or_side_ = spec.definition_column;
    return v;
  }
  v->flags_ |= CodeVersion::kHasSide;
  v->column_or_side_ = static_cast<uint32_t>(sides.size());
  VersionSide& s = sides.emplace_back();
  s.size = spec.size;
  s.timestamp = spec.timestamp;
  s.code_index = spec.code_index;
  s.code = Keep(spec.code);
  s.files = KeepFiles(spec.files);
  s.lines = arena.CopyArray(spec.lines);
  s.salted_code_tail = spec.salted_code_tail;
  s.source_line = spec.source_line;
  s.column = spec.definition_column;
  return v;
}

VersionSide& VersionStore::SideOf(CodeVersion* v) {
  if (v->flags_ & CodeVersion::kHasSide) return sides[v->column_or_side_];
  if (v->flags_ & CodeVersion::kSuffixMask) {
    const std::string raw = v->raw_name();
    const std::string_view stored = arena.Copy(raw);
    v->name_ = stored.data();
    v->name_size_ = static_cast<uint32_t>(stored.size());
    v->flags_ &= static_cast<uint8_t>(~CodeVersion::kSuffixMask);
  }
  VersionSide& s = sides.emplace_back();
  s.size = v->size_;
  s.source_line = v->line_;
  s.column = v->column_or_side_;
  v->column_or_side_ = static_cast<uint32_t>(sides.size() - 1);
  v->flags_ |= CodeVersion::kHasSide;
  return s;
}

// CodeVersion's accessors.

namespace {
const VersionStore& StoreOf(const CodeVersion& v) { return *VersionStore::HeaderOf(v).store; }
const VersionSide* SideOf(const CodeVersion& v, bool has_side, uint32_t id) {
  return has_side ? &StoreOf(v).sides[id] : nullptr;
}
}  // namespace

uint64_t CodeVersion::SideSize() const { return StoreOf(*this).sides[column_or_side_].size; }

std::string CodeVersion::raw_name() const {
  std::string raw(name_, name_size_);
  if (uint8_t kind = flags_ & kSuffixMask)
    VersionStore::AppendSuffix(&raw, kind, source_file(), line_, column_or_side_);
  return raw;
}

std::string_view CodeVersion::function_name() const {
  if (flags_ & kFunctionInterned)
    return StoreOf(*this).strings.Text(uint32_t{function_offset_} << 16 | function_size_);
  return {name_ + function_offset_, function_size_};
}

std::string_view CodeVersion::display_name() const {
  std::string_view function = function_name();
  // Without a readable name the raw one is stored whole (VersionStore::Append).
  return !function.empty() ? function : std::string_view(name_, name_size_);
}

std::string_view CodeVersion::source_file() const {
  return file_ == 0 ? std::string_view() : StoreOf(*this).strings.Text(file_);
}

uint32_t CodeVersion::source_line() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->source_line : line_;
}

uint32_t CodeVersion::definition_column() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->column : column_or_side_;
}

std::string_view CodeVersion::definition_tag() const {
  if (!(flags_ & kHasTag)) return {};
  std::string_view stored = stored_name();
  return stored.substr(stored.rfind('#'));
}

uint32_t CodeVersion::load_order() const {
  const VersionStore::ChunkHeader& header = VersionStore::HeaderOf(*this);
  const auto* first = reinterpret_cast<const char*>(&header) + VersionStore::kHeaderBytes;
  return static_cast<uint32_t>(header.first +
                               static_cast<size_t>(reinterpret_cast<const char*>(this) - first) /
                                   sizeof(CodeVersion));
}

uint64_t CodeVersion::timestamp() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->timestamp : 0;
}

uint64_t CodeVersion::code_index() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->code_index : 0;
}

uint32_t CodeVersion::salted_code_tail() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->salted_code_tail : 0;
}

std::string_view CodeVersion::code() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->code : std::string_view();
}

std::span<const std::string_view> CodeVersion::files() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->files : std::span<const std::string_view>();
}

std::span<const LineEntry> CodeVersion::lines() const {
  const VersionSide* s = SideOf(*this, flags_ & kHasSide, column_or_side_);
  return s ? s->lines : std::span<const LineEntry>();
}

const LineEntry* CodeVersion::LookupLine(uint64_t addr) const {
  return Contains(addr) ? RowAt(lines(), addr) : nullptr;
}

const LineEntry* CodeVersion::RowAt(std::span<const LineEntry> table, uint64_t addr) {
  auto it = std::upper_bound(table.begin(), table.end(), addr,
                             [](uint64_t a, const LineEntry& entry) { return a < entry.addr; });
  if (it == table.begin()) return nullptr;
  return &*(it - 1);
}

CodeVersionSpec CodeVersion::Spec(std::string* raw_name_buffer) const {
  CodeVersionSpec spec;
  *raw_name_buffer = raw_name();
  spec.start = start_;
  spec.size = size();
  spec.raw_name = *raw_name_buffer;
  spec.function_name = function_name();
  spec.source_file = source_file();
  spec.source_line = source_line();
  spec.definition_line = line_;
  spec.definition_column = definition_column();
  spec.definition_tag = definition_tag();
  if (!spec.definition_tag.empty())
    spec.definition_tag = spec.raw_name.substr(spec.raw_name.size() - spec.definition_tag.size());
  spec.source = source_;
  spec.timestamp = timestamp();
  spec.code_index = code_index();
  spec.function_id = function_id_;
  spec.salted_code_tail = salted_code_tail();
  spec.code = code();
  spec.files = files();
  spec.lines = lines();
  return spec;
}

}  // namespace cg_inject
