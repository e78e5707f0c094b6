#pragma once
// A file the tool writes whole or not at all. The writer fills temp_path(), a file beside the
// output; commit() renames it over the output, and without a commit (an error on the way) the
// destructor removes it. A failed command so leaves neither a partial file nor a damaged earlier
// one. A special file (/dev/stdout, a pipe) cannot be replaced by a rename and is written in place.

#include <string>
#include <string_view>

namespace cudakit::cli {

class OutputFile {
 public:
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  // Where the writer writes until commit().
  [[nodiscard]] const std::string& temp_path() const { return temp_; }
  // Writes `text` to temp_path(). @throws std::runtime_error "cannot write 'PATH': reason"
  void write(std::string_view text) const;
  // Makes the written file the output. @throws std::runtime_error "cannot write 'PATH': reason"
  void commit();

 private:
  std::string path_;
  std::string temp_;
  bool committed_ = false;
};

}  // namespace cudakit::cli
