// The store reader and the reader-by-extension dispatch.
#include <fmt/format.h>

#include <filesystem>

#include "wattlab/core/error.h"
#include "wattlab/diagnose/readers.h"

namespace wattlab::diagnose {

Dataset read_store(const std::string& db_path, const std::string& task_filter) {
  // Deliberately unimplemented: see readers.h. The store layer (src/store) lands separately.
  (void)task_filter;
  throw WattlabError(Error{ErrorKind::not_supported,
                           fmt::format("reading wattlab's store ({}) into the diagnosis is not implemented yet", db_path),
                           "export the runs to CSV with the leaderboard's column names and pass that file"});
}

namespace {

enum class Kind { json, csv, store };

class FileReader final : public RecordReader {
 public:
  FileReader(std::string path, Kind kind) : path_(std::move(path)), kind_(kind) {}
  Dataset read() override {
    switch (kind_) {
      case Kind::json: return read_leaderboard_json(path_);
      case Kind::csv: return read_csv(path_);
      case Kind::store: return read_store(path_);
    }
    return {};
  }
  std::string describe() const override {
    const char* k = kind_ == Kind::json ? "ML.ENERGY leaderboard JSON" : kind_ == Kind::csv ? "CSV" : "wattlab store";
    return fmt::format("{} {}", k, path_);
  }

 private:
  std::string path_;
  Kind kind_;
};

}  // namespace

std::unique_ptr<RecordReader> reader_for(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".json") return std::make_unique<FileReader>(path, Kind::json);
  if (ext == ".csv") return std::make_unique<FileReader>(path, Kind::csv);
  if (ext == ".db" || ext == ".sqlite" || ext == ".sqlite3") return std::make_unique<FileReader>(path, Kind::store);
  throw UsageError(fmt::format("{}: unknown data format '{}' (accepted: .json leaderboard task file, .csv, .db store)",
                               path, ext));
}

Dataset read_any(const std::string& path) { return reader_for(path)->read(); }

}  // namespace wattlab::diagnose
