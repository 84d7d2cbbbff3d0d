// Source lines and file ids of JIT code addresses (see version_lines.h).
#include "rewrite/version_lines.h"

#include "resolve/name_table.h"
#include "sources/name_location.h"

namespace cg_inject {

std::string_view FileText(const CodeVersion& version) {
  if (!version.source_file().empty()) return version.source_file();
  if (!version.lines().empty() && version.lines()[0].file_index < version.files().size())
    return version.files()[version.lines()[0].file_index];
  return "???";
}

const CodeVersion* PrologueOwner(const SymbolIndex& index, const CodeVersion& version) {
  if (!version.stored_name().ends_with(kBeamPrologueSuffix) || !version.lines().empty())
    return nullptr;
  const CodeVersion* owner = index.Lookup(version.end());
  if (owner == nullptr || owner->start() != version.end() || owner->source() != version.source() ||
      owner->stored_name().ends_with(kBeamPrologueSuffix) ||
      owner->display_name() != version.display_name())
    return nullptr;
  return owner;
}

uint32_t VersionLines::FileId(std::string_view file) {
  uint64_t address = reinterpret_cast<uintptr_t>(file.data());
  FileIdSlot& slot = file_ids_[(address * 0x9E3779B97F4A7C15ull) >> (64 - kFileIdBits)];
  if (slot.data == file.data() && slot.size == file.size() && slot.id != 0) return slot.id;
  uint32_t id = names_->Intern(file).id;
  if (file.size() <= UINT32_MAX) slot = FileIdSlot{file.data(), uint32_t(file.size()), id};
  return id;
}

void VersionLines::LineOf(const CodeVersion& version, uint64_t addr, uint32_t* line,
                          uint32_t* file) {
  if (&version != version_) {
    version_ = &version;
    lines_ = version.lines();
    files_ = version.files();
    const CodeVersion* owner = PrologueOwner(index_, version);
    line_ = (owner ? *owner : version).source_line();
    file_ = FileOf(owner ? *owner : version);
    row_ = {};
  }
  if (!lines_.empty() && version.Contains(addr)) {
    if (addr - row_.begin < row_.end - row_.begin) {
      *line = row_.line;
      *file = row_.file;
      return;
    }
    const LineEntry* e = CodeVersion::RowAt(lines_, addr);
    if (e && e->file_index < files_.size()) {
      *line = e->line_no;
      *file = FileId(files_[e->file_index]);
      // The row holds up to the next row's address: RowAt answers e anywhere in between.
      const bool last = e == &lines_.back();
      row_ = Row{e->addr, last ? UINT64_MAX : (e + 1)->addr, *line, *file};
      return;
    }
  }
  *line = line_;
  *file = file_;
}

}  // namespace cg_inject
