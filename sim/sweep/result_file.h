#pragma once
// The sweep's output file, written as rows finish so that an interrupted sweep keeps them.
// Rows are appended strictly in row order (CSV: one line each; JSON: an array with one
// object per line), so a partial file is always a prefix of the complete one and
// `--resume` continues it after its last complete unit, giving the same bytes in the end.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sweep/study.h"

namespace fusim::sweep {

enum class FileFormat { Csv, Json };
// By extension: ".csv" or ".json"; anything else is an InputError naming the option.
FileFormat format_for_path(const std::string& path);

class RowFormat {
 public:
  RowFormat(FileFormat format, std::vector<std::string> columns);
  FileFormat format() const { return format_; }
  std::string header() const;                   // CSV: the column line; JSON: "["
  std::string row(const Cells& cells) const;    // one line without its separator
  std::string separator(bool first_row) const;  // written before each row
  std::string footer() const;                   // CSV: ""; JSON: "\n]\n"
  // How a row that starts with these key cells begins (to recognise rows when resuming).
  std::string key_prefix(const Cells& key_cells) const;

 private:
  FileFormat format_;
  std::vector<std::string> columns_;
};

// What an earlier (possibly interrupted) run left in a file.
struct ResumeState {
  std::size_t units_done = 0;    // leading units whose rows are all there
  std::size_t rows_done = 0;     // = units_done * rows per unit
  std::uint64_t keep_bytes = 0;  // file length that holds exactly those rows (0: start afresh)
};

// Reads `path` (absent or empty: nothing done) and checks that every complete row is the
// one this study puts there; a partial last row or unit is dropped. Throws InputError
// (file, line) when the file holds another study's rows.
ResumeState scan_for_resume(const std::string& path, const RowFormat& format, const Study& study);

class ResultWriter {
 public:
  // Starts the file afresh (header), or, after a resume scan, truncates it to keep_bytes
  // and appends. Throws InputError when the file cannot be written.
  ResultWriter(std::string path, RowFormat format, const ResumeState& resume);
  ~ResultWriter();
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  // Appends one unit's rows and flushes them to the OS.
  void append(const UnitRows& rows);
  void finish();  // footer, close

 private:
  std::string path_;
  RowFormat format_;
  std::FILE* file_ = nullptr;
  std::size_t rows_written_ = 0;
};

}  // namespace fusim::sweep
