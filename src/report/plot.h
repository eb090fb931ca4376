// Plots rendered by gnuplot (a well-kept plotting tool; nothing here draws by hand).
//
// A Plot is plain data: series of points with a style, axes with labels (put the unit in the
// label: "energy per token (J)"), optional log scales, categorical x tics. render() writes each
// series to a data file and a gnuplot script into a fresh temporary folder, runs gnuplot, and
// produces an SVG (and a PNG beside it when gnuplot has the pngcairo terminal). Generic on purpose:
// the CLI, and later the HTML report, build Plots from their own data.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattlab/core/error.h"

namespace wattlab::report {

enum class Style {
  line,         // connected, no markers
  points,       // scatter
  linespoints,  // connected with markers
  steps,        // staircase (a Pareto frontier)
  bars,         // boxes from 0 (or the y axis' floor) to y
  range_bars,   // floating boxes from y_low to y (waterfalls)
  errorlines,   // connected with markers and y error bars of half-height y_err
};

struct Point {
  double x = 0;
  double y = 0;
  double y_low = 0;   // range_bars only
  std::string label;  // printed next to the point when Series::show_labels
  double y_err = 0;   // errorlines only: the bar spans y - y_err .. y + y_err
};

struct Series {
  std::string title;  // the legend entry; empty: no entry
  Style style = Style::points;
  std::vector<Point> points;
  std::string color;  // "#1f77b4"; empty: gnuplot's default cycle
  bool show_labels = false;
};

struct Axis {
  std::string label;      // with its unit: "median ITL (ms)"
  double log_base = 0;    // 0: linear; else log scale with this base (2, 10)
  std::optional<double> min, max;
};

// A shaded x interval (a measurement window on a timeline), its label at the top when not empty.
struct Span {
  double x_begin = 0;
  double x_end = 0;
  std::string label;
  std::string color;  // "#1f77b4"; empty: grey
};

struct Plot {
  std::string title;
  std::string subtitle;   // provenance, shown under the title: "source: ML.ENERGY leaderboard v3, gpqa.json"
  Axis x, y;
  std::vector<Series> series;
  std::vector<std::pair<double, std::string>> x_tics;  // categorical tics; empty: automatic
  std::optional<double> hline_y;                        // a reference line (e.g. ratio 1)
  std::optional<double> vline_x;                        // e.g. a deadline
  std::vector<Span> x_spans;                            // shaded x intervals behind the data
  int width_px = 960;
  int height_px = 600;
};

struct Rendered {
  std::string svg_path;
  std::optional<std::string> png_path;  // set when pngcairo was available
  std::string gnuplot_path;
};

// The gnuplot executable: $WATTLAB_GNUPLOT if set, else `gnuplot` on PATH; nullopt when neither.
std::optional<std::string> find_gnuplot();

// The script render() runs, reading the series from data_dir/series<i>.dat (exposed for tests).
std::string gnuplot_script(const Plot& plot, const std::string& data_dir, const std::string& terminal,
                           const std::string& output_path);
// The data file of one series (whitespace-separated columns: x y y_low "label", and y_err for
// errorlines). Text given by callers (titles, labels) is printed literally, never as markup.
std::string series_data(const Series& s);

// Renders `plot` to svg_path (and svg_path with .png when `png` and pngcairo is available).
// Errors: unavailable when gnuplot is missing (with the package to install), io when gnuplot
// fails (with its stderr).
Result<Rendered> render(const Plot& plot, const std::string& svg_path, bool png = true);

}  // namespace wattlab::report
