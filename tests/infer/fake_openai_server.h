// A small OpenAI-compatible server for tests: streams tokens with controllable timing, holds at
// most `max_concurrent` requests (the rest queue, as a batch cap does), and injects faults chosen
// by a marker in the prompt (or the last chat message): FAULT:500, FAULT:disconnect,
// FAULT:malformed, FAULT:usage (usage reports one token more than streamed). Its usage counts one
// prompt token per word of the prompt (or of the last chat message), as the reference server does.
#pragma once
#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace wattlab::testing {

struct FakeServerOptions {
  int tokens = 0;             // tokens per request; 0: the request's max_tokens
  int token_delay_ms = 5;     // between tokens (and before the first, after a slot is free)
  int max_concurrent = 4;     // batch cap; further requests wait for a slot
  bool send_usage = true;     // honour stream_options.include_usage
};

class FakeOpenAiServer {
 public:
  explicit FakeOpenAiServer(FakeServerOptions o) : o_(o) {
    svr_.new_task_queue = [] { return new httplib::ThreadPool(96); };
    auto handler = [this](bool chat) {
      return [this, chat](const httplib::Request& req, httplib::Response& res) { serve(req, res, chat); };
    };
    svr_.Post("/v1/chat/completions", handler(true));
    svr_.Post("/v1/completions", handler(false));
    svr_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lk(mu_);
      res.set_content(
          "# HELP vllm:num_requests_running running\n# TYPE vllm:num_requests_running gauge\n"
          "vllm:num_requests_running{model_name=\"fake\"} " + std::to_string(running_) +
              "\nvllm:num_requests_waiting{model_name=\"fake\"} " + std::to_string(waiting_) +
              "\nvllm:kv_cache_usage_perc{model_name=\"fake\"} " +
              std::to_string(static_cast<double>(running_) / o_.max_concurrent) + "\n",
          "text/plain");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeOpenAiServer() {
    svr_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int max_running_seen() const {
    std::lock_guard lk(mu_);
    return max_running_;
  }

 private:
  void serve(const httplib::Request& req, httplib::Response& res, bool chat) {
    auto j = nlohmann::json::parse(req.body, nullptr, false);
    if (j.is_discarded()) {
      res.status = 400;
      res.set_content(R"({"error":"bad json"})", "application/json");
      return;
    }
    std::string text = chat ? j["messages"].back()["content"].get<std::string>() : j["prompt"].get<std::string>();
    if (text.find("FAULT:500") != std::string::npos) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"injected 500"}})", "application/json");
      return;
    }
    const int n = o_.tokens > 0 ? o_.tokens : j.value("max_tokens", 1);
    int words = 0;
    for (std::size_t i = 0; i < text.size(); ++i) words += text[i] != ' ' && (i == 0 || text[i - 1] == ' ');
    const bool usage = o_.send_usage && j.contains("stream_options") && j["stream_options"].value("include_usage", false);
    const std::string fault = text.find("FAULT:disconnect") != std::string::npos ? "disconnect"
                              : text.find("FAULT:malformed") != std::string::npos ? "malformed"
                              : text.find("FAULT:usage") != std::string::npos    ? "usage"
                                                                                 : "";
    res.set_chunked_content_provider("text/event-stream", [this, n, words, chat, usage, fault](size_t, httplib::DataSink& sink) {
      acquire();
      bool ok = true;
      for (int i = 0; i < n && ok; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(o_.token_delay_ms));
        if (fault == "disconnect" && i == n / 2) {
          release();
          return false;  // drop the connection mid-stream
        }
        if (fault == "malformed" && i == n / 2) ok = write(sink, "this is not an SSE field\n\n");
        nlohmann::json c;
        c["id"] = "fake";
        if (chat) c["choices"] = {{{"index", 0}, {"delta", {{"content", "tok"}}}, {"finish_reason", nullptr}}};
        else c["choices"] = {{{"index", 0}, {"text", "tok"}, {"finish_reason", nullptr}}};
        if (i == n - 1) c["choices"][0]["finish_reason"] = "length";
        ok = ok && write(sink, "data: " + c.dump() + "\n\n");
      }
      if (ok && usage) {
        nlohmann::json u{{"id", "fake"}, {"choices", nlohmann::json::array()},
                         {"usage", {{"prompt_tokens", words}, {"completion_tokens", n + (fault == "usage" ? 1 : 0)}}}};
        ok = write(sink, "data: " + u.dump() + "\n\n");
      }
      if (ok) ok = write(sink, "data: [DONE]\n\n");
      release();
      if (ok) sink.done();
      return ok;
    });
  }
  static bool write(httplib::DataSink& sink, const std::string& s) { return sink.write(s.data(), s.size()); }
  void acquire() {
    std::unique_lock lk(mu_);
    ++waiting_;
    cv_.wait(lk, [this] { return running_ < o_.max_concurrent; });
    --waiting_;
    ++running_;
    max_running_ = std::max(max_running_, running_);
  }
  void release() {
    {
      std::lock_guard lk(mu_);
      --running_;
    }
    cv_.notify_one();
  }

  FakeServerOptions o_;
  httplib::Server svr_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0, waiting_ = 0, max_running_ = 0;
};

}  // namespace wattlab::testing
