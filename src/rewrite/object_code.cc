// Real objects' code among the index's addresses (see object_code.h).
#include "rewrite/object_code.h"

#include <algorithm>
#include <optional>
#include <string>

#include "cg_inject/inject.h"
#include "cg_inject/symbols.h"
#include "resolve/jit_name.h"
#include "resolve/name_table.h"

namespace cg_inject {
namespace {

// A version's end, saturated as the index's own lookups do.
uint64_t EndOf(const CodeVersion& v) {
  return v.size() > UINT64_MAX - v.start() ? UINT64_MAX : v.start() + v.size();
}

/// Adds `range` to `ranges` (sorted, none overlapping or touching another) and merges it with
/// those it overlaps or touches: one binary search and one move, where sorting all of them again
/// for each range cost Node's captures 8M instructions.
template <typename Range>
void InsertAndMerge(std::vector<Range>* ranges, Range range) {
  // The first range that ends at or after the new one's begin: the first it may touch.
  auto first = std::lower_bound(ranges->begin(), ranges->end(), range.begin,
                                [](const Range& r, uint64_t begin) { return r.end < begin; });
  auto last = first;  // one past the last it touches
  while (last != ranges->end() && last->begin <= range.end) {
    range.begin = std::min(range.begin, last->begin);
    range.end = std::max(range.end, last->end);
    ++last;
  }
  if (first == last) {
    ranges->insert(first, range);
  } else {
    *first = range;
    ranges->erase(first + 1, last);
  }
}

/// Sorts `ranges` ({begin, end} pairs) and merges those that overlap or touch, in place.
template <typename Range>
void SortAndMerge(std::vector<Range>* ranges) {
  std::sort(ranges->begin(), ranges->end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  size_t merged = 0;
  for (const Range& r : *ranges) {
    if (merged > 0 && r.begin <= (*ranges)[merged - 1].end)
      (*ranges)[merged - 1].end = std::max((*ranges)[merged - 1].end, r.end);
    else
      (*ranges)[merged++] = r;
  }
  ranges->resize(merged);
}

std::string_view FileName(std::string_view path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace

ObjectCode::ObjectCode(const SymbolIndex& index, const ObjectExtents* extents, NameTable* names)
    : index_(index), extents_(extents), names_(names) {
  for (size_t i = 0; i < index.size(); ++i) {
    index_min_ = std::min(index_min_, index.version(i).start());
    index_max_ = std::max(index_max_, index.version(i).end());
  }
}

void ObjectCode::NoteProgram(uint32_t object, bool found_in_path) {
  const bool new_object = object >= object_noted_.size() || !object_noted_[object];
  NoteObject(object);
  if (found_in_path && new_object) program_guess_ = object;
}

void ObjectCode::NoteObject(uint32_t object) {
  if (object < object_noted_.size() && object_noted_[object]) return;
  if (object >= object_noted_.size()) object_noted_.resize(size_t{object} * 2 + 16, 0);
  object_noted_[object] = 1;
  if (program_guess_ != 0 &&
      FileName(names_->Text(object)) == FileName(names_->Text(program_guess_))) {
    Forget(program_guess_);
    program_guess_ = 0;
  }
  if (!extents_ || IsUnknownObject(names_->Text(object))) return;
  // Asked without sources too: the report keeps stubs out of the unnamed JIT cost either way.
  if (std::optional<uint64_t> bias = extents_->KnownLoadBias(names_->Text(object)))
    Locate(object, *bias);
  else
    libraries_.push_back(object);
  if (index_.empty()) return;
  // The object is open by now: asking its extent here changes nothing the run reports.
  if (extents_->AddressesAreAbsolute(names_->Text(object))) {
    absolute_objects_.push_back({object, ExtentOf(object)});
  } else if (std::optional<uint64_t> bias = extents_->KnownLoadBias(names_->Text(object));
             bias && *bias != 0) {
    shifted_.push_back({object, *bias});
  }
}

void ObjectCode::Forget(uint32_t object) {
  std::erase_if(absolute_objects_, [&](const Absolute& a) { return a.object == object; });
  std::erase_if(shifted_, [&](const Shifted& s) { return s.object == object; });
  std::erase_if(located_, [&](const Located& l) { return l.object == object; });
  std::erase(libraries_, object);
  dropped_.push_back(object);  // never located again
  stubs_.clear();
}

std::optional<uint64_t> ObjectCode::ShiftedObjectBias(uint32_t object) const {
  for (const Shifted& s : shifted_)
    if (s.object == object) return s.bias;
  return std::nullopt;
}

bool ObjectCode::InShiftedObject(uint64_t runtime_addr, uint32_t* object, uint64_t* bias) const {
  for (const Shifted& s : shifted_) {
    if (runtime_addr >= s.bias && Owns(s.object, ExtentOf(s.object), runtime_addr - s.bias)) {
      *object = s.object;
      *bias = s.bias;
      return true;
    }
  }
  return false;
}

void ObjectCode::Locate(uint32_t object, uint64_t bias) {
  if (std::find(dropped_.begin(), dropped_.end(), object) != dropped_.end()) return;
  auto it = std::find_if(located_.begin(), located_.end(),
                         [object](const Located& l) { return l.object == object; });
  if (it != located_.end() && it->bias == bias) return;
  if (it != located_.end()) {
    located_.erase(it);
    dropped_.push_back(object);
  } else {
    located_.push_back({object, bias});
  }
  stubs_.clear();  // answers given before may change
}

void ObjectCode::NoteStubCall(uint64_t addr, uint32_t target_object, uint32_t target) {
  // The stub's own slot against the function its call reaches (issue 36 item 3). A call into the
  // stub's own object (a lazy .plt entry, on the first call) tells nothing.
  Stub stub;
  auto named = named_.find(addr);
  const bool is_stub =
      named != named_.end() ? (stub = named->second.stub).object != 0 : StubAt(addr, &stub);
  if (is_stub && stub.name != 0 && stub.object != target_object &&
      checked_stubs_.insert(addr).second &&
      !extents_->StubCallFits(names_->Text(stub.object), stub.elf_addr, names_->Text(target_object),
                              names_->Text(target))) {
    changed_.push_back(stub.object);
    dropped_.push_back(stub.object);
    std::erase_if(located_, [&](const Located& l) { return l.object == stub.object; });
    std::erase(libraries_, stub.object);
    stubs_.clear();
    return;
  }
  if (libraries_.empty() || !stub_calls_.insert(addr).second) return;
  // Every library has a __cxa_finalize@plt, often at the same offset in its page: an address
  // that two libraries' slots fit places neither.
  std::optional<Located> found;
  for (uint32_t object : libraries_) {
    std::optional<uint64_t> bias =
        extents_->SlotLoadBias(names_->Text(object), addr, names_->Text(target));
    if (!bias) continue;
    if (found) return;
    found = Located{object, *bias};
  }
  if (found) Locate(found->object, found->bias);
}

bool ObjectCode::StubAt(uint64_t addr, Stub* stub) {
  if (stub == nullptr) {
    // Whether, not whose: the name (a symbol, for code outside the PLT) would read the object's
    // symbol tables, which the report's count of stubs never needs (issue 35: 9% of the Java
    // capture's run went to reading libjvm.so's for it). A kept answer is as good.
    if (auto it = stubs_.find(addr); it != stubs_.end()) return it->second.object != 0;
    for (const Located& located : located_) {
      if (addr < located.bias) continue;
      // Outside an object's image it is none of its code: asked without the catalog's lock and
      // lookup (the report asks about each `???` function: 9,512 times on the mcs capture, for
      // each of about a dozen located objects).
      const Extent& extent = ExtentOf(located.object);
      if (extent.kind == Extent::kRange && !Owns(located.object, extent, addr - located.bias))
        continue;
      if (extents_->IsCodeAt(names_->Text(located.object), addr - located.bias)) return true;
    }
    return false;
  }
  auto [it, inserted] = stubs_.try_emplace(addr);
  if (inserted) {
    for (const Located& located : located_) {
      if (addr < located.bias) continue;
      const uint64_t elf_addr = addr - located.bias;
      std::optional<std::string> name =
          extents_->CodeNameAt(names_->Text(located.object), elf_addr);
      if (!name) continue;
      it->second = Stub{located.object, name->empty() ? 0 : names_->Intern(*name).id, elf_addr};
      break;
    }
  }
  if (it->second.object == 0) return false;
  if (stub != nullptr) *stub = it->second;
  return true;
}

const std::string& ObjectCode::ProgramObject(std::string_view program) {
  auto [it, inserted] = programs_.try_emplace(std::string(program));
  if (inserted && extents_ != nullptr) it->second = extents_->ProgramObject(program);
  return it->second;
}

bool ObjectCode::NamedStubAt(uint64_t addr, Stub* stub, bool for_call) {
  auto [it, inserted] = named_.try_emplace(addr);
  if (inserted) StubAt(addr, &it->second.stub);
  if (it->second.stub.object == 0) return false;
  it->second.in_call = it->second.in_call || for_call;
  *stub = it->second.stub;
  return true;
}

bool ObjectCode::ForgetStub(uint64_t addr) {
  auto it = named_.find(addr);
  if (it == named_.end() || it->second.in_call) return false;
  it->second.stub = Stub{};
  return true;
}

bool ObjectCode::IsAbsolute(uint32_t object) const {
  // A few objects at most (the program, when it is an ET_EXEC).
  for (const Absolute& a : absolute_objects_)
    if (a.object == object) return true;
  return false;
}

const ObjectExtents::Extent& ObjectCode::AskExtent(uint32_t object) const {
  auto [extent, inserted] = extents_by_object_.try_emplace(object);
  if (inserted) {
    std::string_view text = names_->Text(object);
    if (!extents_ || IsUnknownObject(text))
      *extent = Extent{Extent::kUnknown};
    else
      *extent = extents_->ExtentOf(text);
  }
  // A copy: the map's values move when it grows.
  previous_extent_ = last_extent_;
  previous_object_ = last_object_;
  has_previous_object_ = has_last_object_;
  last_extent_ = *extent;
  last_object_ = object;
  has_last_object_ = true;
  return last_extent_;
}

bool ObjectCode::AskContains(uint32_t object, uint64_t addr) const {
  std::optional<bool> own = extents_->Contains(names_->Text(object), addr);
  return own && *own;
}

bool ObjectCode::SearchCovered(uint64_t addr) const {
  if (!covered_built_) {
    if (tree_questions_++ < index_.size() / 4) return index_.Lookup(addr) != nullptr;
    covered_built_ = true;
    covered_.reserve(index_.size());
    for (size_t i = 0; i < index_.size(); ++i) {
      const CodeVersion& v = index_.version(i);
      if (v.start() != EndOf(v)) covered_.push_back({v.start(), EndOf(v)});
    }
    SortAndMerge(&covered_);
    covered_.shrink_to_fit();
  }
  return FindRange(covered_, addr, &last_range_, &last_range_covered_);
}

bool ObjectCode::FindRange(const std::vector<Range>& ranges, uint64_t addr, Range* last, bool* in) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), addr,
                                [](uint64_t a, const Range& r) { return a < r.begin; });
  if (after != ranges.begin() && addr < (after - 1)->end) {
    *last = *(after - 1);
    return *in = true;
  }
  // The gap between the ranges around `addr` holds none of them.
  *last = {after == ranges.begin() ? 0 : (after - 1)->end,
           after == ranges.end() ? UINT64_MAX : after->begin};
  return *in = false;
}

const CodeVersion* ObjectCode::VersionAt(uint64_t addr) const {
  if (addr - lone_range_.begin < lone_range_.end - lone_range_.begin) return lone_version_;
  const CodeVersion* v = index_.Lookup(addr);
  if (v != nullptr && !index_.Overlapped(*v)) {
    lone_version_ = v;
    lone_range_ = {v->start(), EndOf(*v)};
  }
  return v;
}

void ObjectCode::NoteFunction(const FunctionKey& function) {
  if (!IsAbsolute(function.object)) return;
  auto [file, inserted] =
      function_files_.try_emplace((uint64_t{function.object} << 32) | function.function);
  if (inserted) *file = function.file;
}

void ObjectCode::NoteCost(const FunctionKey& function, uint64_t addr) {
  if (addr < index_min_ || addr >= index_max_ || !IsAbsolute(function.object) || !Covered(addr))
    return;
  const CodeVersion* v = VersionAt(addr);
  if (v == nullptr || !object_code_.try_emplace(v, function).second) return;
  InsertAndMerge(&object_code_ranges_, Range{v->start(), EndOf(*v)});
  last_object_code_range_ = {};  // the ranges changed
}

bool ObjectCode::IsObjectCode(uint64_t addr, const FunctionKey** owner) const {
  if (owner) *owner = nullptr;
  if (!object_code_.empty() && InObjectCodeRange(addr) && Covered(addr)) {
    if (const CodeVersion* v = VersionAt(addr)) {
      if (auto it = object_code_.find(v); it != object_code_.end()) {
        if (owner) *owner = &it->second;
        return true;
      }
    }
  }
  for (const Absolute& a : absolute_objects_)
    if (Owns(a.object, a.extent, addr)) return true;
  return false;
}

bool ObjectCode::IsJitAddress(uint32_t object, uint64_t addr) const {
  return InIndexSpanElsewhere(object, addr) && Covered(addr) && !IsObjectCode(addr);
}

bool ObjectCode::MayBeJitAddress(uint32_t object, uint64_t addr) const {
  return InIndexSpanElsewhere(object, addr) && !IsObjectCode(addr);
}

const FunctionKey* ObjectCode::SymbolOwner(uint64_t addr) {
  for (const Absolute& a : absolute_objects_) {
    if (!Owns(a.object, a.extent, addr)) continue;
    const uint32_t object = a.object;
    std::optional<std::string> symbol = extents_->FunctionAt(names_->Text(object), addr);
    if (!symbol) return nullptr;
    uint32_t function = names_->Intern(*symbol).id;
    uint64_t packed = (uint64_t{object} << 32) | function;
    auto [it, inserted] = symbol_owners_.try_emplace(packed);
    if (inserted) {
      const uint32_t* file = function_files_.find(packed);
      it->second = FunctionKey{object, file ? *file : names_->Intern("???").id, function};
    }
    return &it->second;
  }
  return nullptr;
}

}  // namespace cg_inject
