#include "report/html.h"

#include <regex>

namespace wattlab::report {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string inline_svg(std::string_view svg_text, const std::string& id_prefix, const std::string& plot_name) {
  std::string s(svg_text);
  if (auto at = s.find("<svg"); at != std::string::npos) s.erase(0, at);  // <?xml ...?>, <!DOCTYPE ...>
  // Ids are unique per file; on one page they must be unique across plots.
  s = std::regex_replace(s, std::regex(R"(\bid\s*=\s*(['"]))"), "id=$1" + id_prefix);
  s = std::regex_replace(s, std::regex(R"(href\s*=\s*(['"])#)"), "href=$1#" + id_prefix);
  s = std::regex_replace(s, std::regex(R"(url\(#)"), "url(#" + id_prefix);
  const std::string name = html_escape(plot_name);
  s.replace(0, 4, "<svg class=\"plot\" data-plot=\"" + name + "\" role=\"img\" aria-label=\"" + name + "\"");
  if (auto t = s.find("<title>"); t != std::string::npos)
    if (auto e = s.find("</title>", t); e != std::string::npos) s.replace(t + 7, e - t - 7, name);
  return s;
}

}  // namespace wattlab::report
