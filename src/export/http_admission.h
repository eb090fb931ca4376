// What the exporter's HTTP server lets through to its handlers, decided from the request line and
// headers alone, before any body is read: the bearer token first (so a client without it learns
// nothing else), then no body, then GET or HEAD. Every refusal closes the connection: a refused
// body is never read, and a client without the token keeps no thread between requests.
#pragma once
#include <httplib.h>

#include <optional>
#include <string>

namespace wattlab::http {

struct Admission {
  int status = 0;          // 0: admitted; else the answer: 401, 413 or 405
  bool unread_body = false;  // the request announced a body, left unread on the socket
  const char* message = "";  // the answer's text
};

// `token`: set, requests need "Authorization: Bearer <token>" (compared in constant time).
Admission admit(const httplib::Request& req, const std::optional<std::string>& token);

// The refusal as an answer: status, text, and for 401 the WWW-Authenticate challenge, for 405 Allow.
void answer_refusal(const Admission& a, httplib::Response& res);

}  // namespace wattlab::http
