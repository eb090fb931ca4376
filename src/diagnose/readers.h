// Readers: turn a file (or, later, wattlab's store) into a Dataset of ConfigRecords.
//
// Every reader validates as it goes. A malformed input (not JSON/CSV, a missing or mistyped
// field, a non-finite or non-positive measurement) throws wattlab::UsageError whose message names
// the file, the row index and the field, so the CLI exits 2. Row invariants that fail on a
// well-formed row are not errors: they are collected in Dataset::violations and reported per row.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/records.h"

namespace wattlab::diagnose {

// The interface every source of records implements. The CLI and the analyses only see Datasets.
class RecordReader {
 public:
  virtual ~RecordReader() = default;
  virtual Dataset read() = 0;
  virtual std::string describe() const = 0;  // "ML.ENERGY leaderboard JSON gpqa.json"
};

// ML.ENERGY leaderboard task file: {task, task_display_name, [architecture], configurations:[...]}.
// Works for every task of the leaderboard: LLM and MLLM rows (energy_per_token_joules ...) and
// diffusion rows (image or video). Unknown fields are kept in ConfigRecord::extra_json.
Dataset read_leaderboard_json(const std::string& path);
// The same, from text in memory; `source` names it in messages.
Dataset parse_leaderboard_json(std::string_view text, const std::string& source);

// CSV with a header row whose column names are the leaderboard's field names (and, optionally,
// the MeasuredExtras names and a `task` column). An empty cell is an absent value. The task is
// the `task` column, else the file's stem.
Dataset read_csv(const std::string& path);
Dataset parse_csv(std::string_view text, const std::string& source);

// wattlab's own store (SQLite, src/store): every window with counts (marks: tokens, requests,
// images...) of every run becomes one record, its configuration read from the window's labels
// over the run's tags (model, task, gpu, gpus, batch, precision...: docs/diagnose.md "Reading
// the store"), GPU energy from the gpu:N domains, CPU energy (cpu:N/package, cpu:N/dram) and the
// telemetry summaries as MeasuredExtras. Windows that lack what a record needs, runs without such
// windows, and windows labelled phase other than "steady" land in Dataset::rejected with why.
// `task_filter` keeps only that task. A missing file or one that is not a store: UsageError.
Dataset read_store(const std::string& db_path, const std::string& task_filter = "");

// Picks the reader by extension: .json -> leaderboard JSON, .csv -> CSV, .db/.sqlite -> store.
std::unique_ptr<RecordReader> reader_for(const std::string& path);
Dataset read_any(const std::string& path);

// A record as a leaderboard row (its field names and units, extras included), as JSON text.
std::string record_to_json(const ConfigRecord& r);

}  // namespace wattlab::diagnose
