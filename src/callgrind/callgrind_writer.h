// The Callgrind writer: the last ProfileSink of the pipeline, turning records back into text.
#pragma once

#include <array>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "callgrind/raw_lines.h"
#include "callgrind/string_interner.h"
#include "cg_inject/profile.h"
#include "util/chunked_vector.h"
#include "util/flat_hash_map.h"
#include "util/id_slots.h"

namespace cg_inject {

class ByteSink;

struct CallgrindWriterOptions {
  /// Write `(id) name` on first use and `(id)` afterwards; false writes every name in full
  /// (`--no-compress`).
  bool compress_names = true;
  /// Write +N/-N/* instead of an absolute position when that is shorter.
  bool compress_positions = true;
  /// Copy a record's input text (`raw`, profile.h) instead of formatting it whenever the copy
  /// reads the same to every consumer; needs both compressions on (the input's text is
  /// compressed). False formats every record, as the writer's own rules say.
  bool copy_input = true;
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
/// another file. Records that carry their input text are copied when the copy means the same in
/// the output's context (ids, current ob/fl/fi, the base of relative positions), so a profile
/// no stage changed comes out byte-identical.
class CallgrindWriter : public ProfileSink {
 public:
  explicit CallgrindWriter(ByteSink* out, CallgrindWriterOptions options = {});
  ~CallgrindWriter() override;
  CallgrindWriter(const CallgrindWriter&) = delete;
  CallgrindWriter& operator=(const CallgrindWriter&) = delete;

  void OnPartBegin(int part_index) override;
  void OnHeader(std::string_view key, std::string_view value) override;
  void OnRawHeader(std::string_view key, std::string_view value, std::string_view raw) override;
  void OnLayout(const PartLayout& layout) override;
  void OnFunction(const FunctionContext& function) override;
  void OnCost(const CostRecord& cost) override;
  void OnCall(const CallRecord& call) override;
  void OnJump(const JumpRecord& jump) override;
  void OnPartEnd() override;

  /// Hands buffered text to the sink (done automatically at each part end).
  void Flush();

 private:
  enum Space { kObjects = 0, kFiles = 1, kFunctions = 2 };

  /// What the readers of our output currently believe; reset per part. Names are the records'
  /// views, valid through the part (profile.h): the copy path then interns no name it does not
  /// bind to an id, and compares the same view without reading the text. `fl_file` is the file of
  /// the last fl= (KCachegrind's file for the next fn=), `source_file` the file that fl=/fi=/fe=
  /// made current (callgrind_annotate's file for the next fn=, and both readers' default for
  /// cfi=/jfi=).
  struct Current {
    bool has_object = false, has_file = false, has_fl = false;
    Name object;  // the producer's, for the jfn= key
    std::string_view file, fl_file, source_file, function;
  };

  /// A function as KCachegrind identifies a compressed function id: the object and file in force
  /// where the id is defined, and the name, as text ids. 12 bytes where three strings were ~130.
  struct FunctionKey {
    uint32_t object = 0, file = 0, function = 0;  // function 0: none (a free output id)
    bool operator==(const FunctionKey&) const = default;
  };
  struct FunctionKeyHash {
    size_t operator()(const FunctionKey& k) const;
  };

  /// Appends "tag=" plus the name, compressed when enabled (objects and files). `hint` is the
  /// context line of the record's input text that named it: its id is taken for a name that
  /// has none yet, so later copied lines can refer to it.
  void AppendName(std::string_view tag, Space space, const Name& name, RawKey hint);
  /// Appends "tag=" plus a function name whose id is bound to `object` and `file`, the context
  /// in which the consumer will read this line.
  void AppendFunction(std::string_view tag, const Name& object, const Name& file,
                      const Name& function, RawKey hint);
  /// The text id of a record's name (see text_cache_).
  uint32_t TextId(const Name& name);

  /// Writes `name` in full or as "(id) name"/"(id)", `id` being 0 for a name written in full.
  void AppendCompressed(std::string_view name, uint32_t id, bool known);
  /// Whether an output id already stands for a name (NameIdBound) or a function.
  bool NameIdBound(Space space, uint32_t id) const;
  bool FunctionIdBound(uint32_t id) const;
  /// The id for a name that has none yet: the hint's input id when that is free, else one
  /// above every id used or seen in the part's input text.
  uint32_t NewId(Space space, std::string_view name, RawKey hint);
  /// ParseRawLines into raw_, noting the input's ids.
  bool ParseRaw(std::string_view raw, RawKind kind);

  // Copying input text. Each Copy* checks that the record's text reads the same in the
  // output's context and, if so, copies it and updates the context; false: format instead.
  /// The file a closing fi=/fe= line (before a function or totals:) names; false if the copy
  /// would not name the input's file.
  bool ClosingFile(const RawName& fi, std::string_view* file);
  bool CopyFunction(const FunctionContext& f);
  bool CopyCost(const CostRecord& cost);
  bool CopyCall(const CallRecord& call);
  bool CopyJump(const JumpRecord& jump);
  void CopyRaw(std::string_view raw, bool starts_with_marker);
  /// Relative positions in the input text are based on `base`; true when that is also the
  /// consumer's base in the output.
  bool SameBase(const Position& base) const;
  /// Whether the context line `n` (absent, a definition, a reference) names `text` in the output.
  /// `earlier` is a context line before `n` in the same text, which may define n's id.
  bool RawNameIs(Space space, const RawName& n, std::string_view text,
                 const RawName* earlier = nullptr);
  /// Whether the cfn=/jfn=/fn= line `n` names `function` of `object` and `file` in the output.
  bool RawFunctionIs(const RawName& n, const Name& object, const Name& file, const Name& function);
  /// A fi=/fe= line (or none) leaves `file` current.
  bool RawSourceFileIs(const RawName& fi, const Name& file);
  /// Output id `id` stands for `text` from here on in this part.
  void BindId(Space space, uint32_t id, std::string_view text);
  void BindFunctionId(uint32_t id, const FunctionKey& function);
  void BindRawName(Space space, const RawName& n) {
    if (n.has_id && n.has_text) BindId(space, n.id, n.text);
  }
  void UseRawSourceFile(const RawName& fi, const Name& file);
  /// The writer's own text follows: the "# callgrind format" line and blank lines still owed.
  void BeginFormatted();
  /// Appends fi=/fe= when `file` differs from the file the reader has current.
  void SwitchSourceFile(const Name& file);
  /// Appends the position columns; `update` says whether the reader will take them as its new
  /// base for relative positions (position lines do, call/jump targets do not).
  void AppendPosition(const Position& pos, bool update);
  void AppendCosts(std::span<const uint64_t> costs);
  void AppendUnsigned(uint64_t value);
  void AppendHex(uint64_t value);

  /// Makes room for `n` more bytes (flushing if needed) and returns where they go. Inline, the
  /// flush out of line: every copied line and formatted field comes here (2% of a map run's
  /// instructions were the calls).
  char* Room(size_t n) {
    if (n > buffer_.size() - used_) [[unlikely]]
      MakeRoom(n);
    return buffer_.data() + used_;
  }
  void MakeRoom(size_t n);
  void Put(std::string_view text) {
    char* p = Room(text.size());
    std::memcpy(p, text.data(), text.size());
    used_ += text.size();
  }
  void PutChar(char c) {
    *Room(1) = c;
    ++used_;
  }
  /// Put for a name: a line break inside it is written escaped.
  void PutName(std::string_view name);

  ByteSink* out_;
  CallgrindWriterOptions options_;
  std::string buffer_;  // fixed size; the first used_ bytes are pending output
  size_t used_ = 0;
  bool wrote_anything_ = false;      // a part has begun
  bool body_written_ = false;        // a body line was written in the current part
  bool copy_input_ = false;          // options_.copy_input and both compressions
  bool need_marker_ = true;          // "# callgrind format" not written yet
  int pending_blanks_ = 0;           // separating blank lines, dropped before copied text
  bool copied_ = false;              // some input text of this part was copied
  RawLines raw_;                     // the current record's parsed input text
  const RawLines* hints_ = nullptr;  // raw_ while a record whose text was refused is formatted

  // Every name text the writer has met, stored once; the tables below hold its ids. Not cleared
  // per part: memory grows with distinct names, as the reader's does.
  StringInterner texts_;
  /// Fast path of TextId by the record's Name::id: the text id and the view it was seen with.
  /// Hashing every name was 16% of a rewrite, comparing scattered texts 17% of a no-source run.
  /// Names are interned by their producer and live as long as it (profile.h), so within a part
  /// the same pointer and size is the same text; ids of another producer that collide only cost
  /// a miss. Direct-mapped by id, a fixed 1 MB: one slot per producer id was 36 MB at 1M
  /// functions, and a profile's hot names fit. Cleared per part.
  struct TextCacheSlot {
    const char* data = nullptr;
    uint32_t size = 0;
    uint32_t text = 0;  // 0: empty slot
  };
  static constexpr size_t kTextCacheSlots = size_t{1} << 16;
  std::vector<TextCacheSlot> text_cache_;

  // Compression ids, cleared at OnPartBegin: KCachegrind forgets every id at each part, so each
  // part names everything again, as Callgrind does with --combine-dumps=yes.
  FlatHashMap<uint32_t, uint32_t> ids_[2];  // objects, files: text id -> output id
  /// What an output id of an object or file stands for, and the record view it last matched
  /// (RawNameIs: the same view skips the compare).
  struct NameSlot {
    uint32_t text = 0;        // 0: a free id
    std::string_view stored;  // the text, in texts_
    std::string_view seen;
  };
  IdSlots<NameSlot> names_by_id_[2];
  // Function ids by (object, file, name): one id per function as KCachegrind identifies it.
  // Ids are bound once per part, so each id the index holds keeps naming its function.
  static FunctionKey KeyOf(const IdSlots<FunctionKey>& t, uint32_t id) { return t[id]; }
  IdSlots<FunctionKey> functions_by_id_;  // output id -> function
  KeyIndex<FunctionKey, FunctionKeyHash, IdSlots<FunctionKey>, KeyOf> function_ids_{
      &functions_by_id_};
  std::array<uint32_t, 3> max_id_{};        // objects, files, functions
  std::array<uint32_t, 3> max_input_id_{};  // the largest id seen in the part's input text

  PositionLayout layout_;
  Current current_;
  Position last_;          // the last position line written: the consumers' relative base
  bool has_last_ = false;  // false: the next position is written absolute
};

}  // namespace cg_inject
