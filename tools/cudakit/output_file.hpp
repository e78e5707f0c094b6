#pragma once
// A file the tool writes whole or not at all. See Note [Writing outputs] in output_file.cpp.
//
//   OutputFile out(path);   // checks the target, creates PATH.<pid>.partial beside it
//   out.write(text);        // appends to the temporary (or to standard output for "-")
//   out.commit();           // renames the temporary over PATH
//
// Without a commit (an error on the way, or SIGINT/SIGTERM/SIGHUP) the temporary is removed, so a
// failed command leaves neither a partial file nor a damaged earlier one.

#include <string>
#include <string_view>

namespace cudakit::cli {

// The path that names standard output ("-o -").
inline constexpr std::string_view kStandardOutput = "-";

// Why `path` cannot be an output, empty when it can: it may be "-", a new file in a folder that
// exists and can be written, or a regular file its owner may write. A symbolic link, a device, a
// pipe or a folder is refused (the rename would replace it), as is a read-only file.
[[nodiscard]] std::string refuse_output(const std::string& path);

class OutputFile {
 public:
  // @throws std::runtime_error with refuse_output's reason, or "cannot create TEMPORARY: reason".
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] bool is_standard_output() const { return path_ == kStandardOutput; }
  // The temporary, for a library writer that takes a path and replaces the file there (commit()
  // then renames what it wrote); empty for standard output.
  [[nodiscard]] const std::string& temp_path() const { return temp_; }
  // Appends `text`. @throws std::runtime_error "cannot write 'PATH': reason" (a full disk says so)
  void write(std::string_view text);
  // Makes the written file the output. @throws std::runtime_error "cannot write 'PATH': reason"
  void commit();

 private:
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;  // in the list of temporaries the signal handler removes
  bool committed_ = false;
};

}  // namespace cudakit::cli
