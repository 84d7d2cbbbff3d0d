// The Callgrind writer: the last ProfileSink of the pipeline, turning records back into text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cg_inject/profile.h"

namespace cg_inject {

class ByteSink;

struct CallgrindWriterOptions {
  /// Write `(id) name` on first use and `(id)` afterwards; false writes every name in full
  /// (`--no-compress`).
  bool compress_names = true;
  /// Write +N/-N/* instead of an absolute position when that is shorter.
  bool compress_positions = true;
};

/// Writes a valid Callgrind file to a ByteSink: `# callgrind format` first, header lines as
/// received, then the body with ob=/fl=/fi=/fe=/cob=/cfi= only where the context changes and
/// cfn= before every calls=. Buffers output in large blocks and hands everything to the sink by
/// the end of each part; the caller finishes or commits the sink. A name that would read back as
/// a compressed one ("(3) x") is written compressed even with compress_names off.
///
/// The output reads the same in KCachegrind and callgrind_annotate (see the .cc for the rules):
/// function ids are bound to (object, file, name) as Callgrind binds them, every part defines
/// its ids afresh, and fl= is written whenever either consumer would otherwise give the function
/// another file.
class CallgrindWriter : public ProfileSink {
 public:
  explicit CallgrindWriter(ByteSink* out, CallgrindWriterOptions options = {});
  ~CallgrindWriter() override;
  CallgrindWriter(const CallgrindWriter&) = delete;
  CallgrindWriter& operator=(const CallgrindWriter&) = delete;

  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  void OnPartEnd() override;

  /// Hands buffered text to the sink (done automatically at each part end).
  void Flush();

 private:
  enum Space { kObjects = 0, kFiles = 1 };

  /// What the readers of our output currently believe; reset per part. `fl_file` is the file of
  /// the last fl= (KCachegrind's file for the next fn=), `source_file` the file that fl=/fi=/fe=
  /// made current (callgrind_annotate's file for the next fn=, and both readers' default for
  /// cfi=/jfi=).
  struct Current {
    bool has_object = false, has_file = false, has_fl = false;
    uint32_t object_id = 0;  // Name::id of `object` as the last fn= received it
    std::string object, file, fl_file, source_file, function;
  };

  /// A function as KCachegrind identifies a compressed function id: the object and file in force
  /// where the id is defined, and the name.
  struct FunctionIdKey {
    std::string object, file, function;
    bool operator==(const FunctionIdKey&) const = default;
  };
  struct FunctionIdKeyHash {
    size_t operator()(const FunctionIdKey& k) const;
  };
  /// Fast path of FunctionId: the last key seen for a function Name::id, checked by text.
  struct FunctionIdCacheSlot {
    uint32_t object_id = 0, file_id = 0, writer_id = 0;
    const FunctionIdKey* key = nullptr;
  };

  /// Appends "tag=" plus the name, compressed when enabled (objects and files).
  void AppendName(std::string_view tag, Space space, const Name& name);
  /// Appends "tag=" plus a function name whose id is bound to `object` and `file`, the context
  /// in which the consumer will read this line.
  void AppendFunction(std::string_view tag, const Name& object, const Name& file,
                      const Name& function);
  /// Writes `name` in full or as "(id) name"/"(id)", `id` being 0 for a name written in full.
  void AppendCompressed(std::string_view name, uint32_t id, bool known);
  /// Appends fi=/fe= when `file` differs from the file the reader has current.
  void SwitchSourceFile(const Name& file);
  /// Appends the position columns; `update` says whether the reader will take them as its new
  /// base for relative positions (position lines do, call/jump targets do not).
  void AppendPosition(const Position& pos, bool update);
  void AppendCosts(std::span<const uint64_t> costs);
  void AppendUnsigned(uint64_t value);
  void AppendHex(uint64_t value);

  /// Makes room for `n` more bytes (flushing if needed) and returns where they go.
  char* Room(size_t n);
  void Put(std::string_view text);
  void PutChar(char c);

  ByteSink* out_;
  CallgrindWriterOptions options_;
  std::string buffer_;  // fixed size; the first used_ bytes are pending output
  size_t used_ = 0;
  bool wrote_anything_ = false;
  bool body_written_ = false;  // a body line was written in the current part

  // Compression ids of objects and files by name text. KCachegrind forgets every id at each
  // part, so they are cleared at OnPartBegin and each part names everything again, as Callgrind
  // does with --combine-dumps=yes.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using IdMap = std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;
  using IdEntry = IdMap::value_type;
  IdMap ids_[2];
  std::vector<const IdEntry*> cache_[2];  // by Name::id; see AppendName
  // Function ids by (object, file, name): one id per function as KCachegrind identifies it.
  std::unordered_map<FunctionIdKey, uint32_t, FunctionIdKeyHash> function_ids_;
  std::vector<FunctionIdCacheSlot> function_cache_;  // by the function's Name::id

  PositionLayout layout_;
  Current current_;
  Position last_;
  bool has_last_ = false;  // false: the next position is written absolute
};

}  // namespace cg_inject
