#include "http_admission.h"

namespace wattlab::http {
namespace {

// A body is announced by a Content-Length other than 0 or by any Transfer-Encoding.
bool announces_body(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  const auto n = req.get_header_value_count("Content-Length");
  for (std::size_t i = 0; i < n; ++i) {
    const std::string v = req.get_header_value("Content-Length", i);
    if (v.find_first_not_of("0 \t") != std::string::npos) return true;
  }
  return false;
}

// Constant-time comparison: the token must not leak through response timing.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size() || b.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool bearer_matches(const httplib::Request& req, const std::string& token) {
  const std::string h = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (h.size() <= prefix.size() || h.compare(0, prefix.size(), prefix) != 0) return false;
  return same_secret(h.substr(prefix.size()), token);
}

}  // namespace

Admission admit(const httplib::Request& req, const std::optional<std::string>& token) {
  const bool body = announces_body(req);
  if (token && !bearer_matches(req, *token))
    return {401, body, "401 unauthorized: send 'Authorization: Bearer <token>'\n"};
  if (body) return {413, true, "413: the exporter reads no request body; send GET /metrics without one\n"};
  if (req.method != "GET" && req.method != "HEAD") return {405, false, "405: the exporter answers GET and HEAD only\n"};
  return {};
}

void answer_refusal(const Admission& a, httplib::Response& res) {
  res.status = a.status;
  if (a.status == 401) res.set_header("WWW-Authenticate", "Bearer realm=\"wattlab\"");
  if (a.status == 405) res.set_header("Allow", "GET, HEAD");
  res.set_content(a.message, "text/plain; charset=utf-8");
}

}  // namespace wattlab::http
