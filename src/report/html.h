// Pieces of a self-contained HTML page: text escaping, and gnuplot's SVG made fit to inline.
#pragma once
#include <string>
#include <string_view>

namespace wattlab::report {

// Text and attribute values: & < > " ' become entities.
std::string html_escape(std::string_view text);

// An SVG file as gnuplot writes it, turned into an <svg> element for an HTML page: the XML prolog
// dropped, every id (and each reference to one) prefixed with `id_prefix` so several plots can
// share a page, the root tagged class="plot" data-plot="<plot_name>", its <title> set to the name.
std::string inline_svg(std::string_view svg_text, const std::string& id_prefix, const std::string& plot_name);

}  // namespace wattlab::report
