#pragma once
// gzip streams for readers' tests: whole, or broken the ways real files break (cut after a flush,
// without the trailer, as a writer killed mid-file leaves them; or the header alone).

#include <zlib.h>

#include <string>

namespace cudakit::testing {

enum class Gzip { whole, cut_after_flush, header_only };

inline std::string gzip(const std::string& text, Gzip form) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);  // 31: a gzip header and trailer
  std::string out(text.size() + 1024, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, form == Gzip::whole ? Z_FINISH : Z_SYNC_FLUSH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return form == Gzip::header_only ? out.substr(0, 10) : out;
}

}  // namespace cudakit::testing
