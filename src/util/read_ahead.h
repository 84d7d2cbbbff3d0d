// A ByteSource that reads its inner source ahead on a thread of its own.
#pragma once

#include <memory>

namespace cg_inject {

class ByteSource;

/// Wraps `inner` so that its Read calls (zstd decompression, for one) run on a background
/// thread, a few 1 MiB blocks ahead of the consumer. Bytes and their order are unchanged; an
/// error `inner` throws reaches the consumer's Read once the bytes before it are consumed.
std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> inner);

}  // namespace cg_inject
