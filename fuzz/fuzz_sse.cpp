// Fuzzes the server-sent events parser of the inference client (src/infer/sse_stream.cpp): a
// stream fed whole and the same stream fed in pieces (as bytes arrive off a socket) must say the
// same thing: tokens, [DONE], usage, finish and error. The first byte picks the API and the piece
// size; the rest is the stream.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "infer/sse_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using wattlab::fuzz::check;
  using wattlab::infer::Api;
  using wattlab::infer::SseStream;
  if (size == 0) return 0;
  const Api api = (data[0] & 1) ? Api::chat : Api::completions;
  const std::size_t piece = 1 + (data[0] >> 1) % 17;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  SseStream whole(api);
  const int whole_tokens = whole.feed(stream);
  SseStream pieces(api);
  int piece_tokens = 0;
  for (std::size_t at = 0; at < stream.size(); at += piece) piece_tokens += pieces.feed(stream.substr(at, piece));

  check(whole_tokens == piece_tokens, "tokens differ when fed in pieces of " + std::to_string(piece));
  check(whole.chunks() == pieces.chunks(), "chunks differ when fed in pieces");
  check(whole.chunks() == whole_tokens, "chunks() counts the tokens feed() returned");
  check(whole.done() == pieces.done(), "[DONE] differs when fed in pieces");
  check(whole.error() == pieces.error(), "the error differs when fed in pieces: '" + whole.error() + "' vs '" + pieces.error() + "'");
  check(whole.finish_seen() == pieces.finish_seen(), "finish_reason differs when fed in pieces");
  check(whole.usage_completion_tokens() == pieces.usage_completion_tokens(), "usage differs when fed in pieces");
  check(whole.usage_prompt_tokens() == pieces.usage_prompt_tokens(), "usage differs when fed in pieces");
  check(whole.chunks() >= 0, "a token count is >= 0");
  check(!(whole.done() && !whole.error().empty()), "a stream is not both done and failed");
  return 0;
}
