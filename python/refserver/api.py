"""The OpenAI-compatible request and response shapes (pure functions, no I/O): what a completions or
chat request asks, checked against what the server does, and the JSON of each stream chunk, usage
chunk and whole response, shaped as vLLM's."""
import json
import time
from dataclasses import dataclass

DEFAULT_MAX_TOKENS = 16  # OpenAI's default for completions
# Request fields that would change what is generated, which this server does not implement.
UNSUPPORTED = ("n", "best_of", "stop", "logprobs", "top_logprobs", "echo", "suffix", "tools", "tool_choice",
               "response_format", "logit_bias", "presence_penalty", "frequency_penalty", "seed")


class BadRequest(Exception):
    """A request the server refuses (HTTP 400, or `status`), with a message naming the field."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


@dataclass
class ParsedRequest:
    chat: bool
    prompt_text: str
    max_tokens: int
    stream: bool
    include_usage: bool
    model: str


@dataclass
class Sampling:
    """The sampling every request gets, fixed when the server starts (the engine samples with it)."""

    temperature: float
    top_p: float


def _content_text(content, where):
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
        parts = []
        for p in content:
            if not isinstance(p, dict) or p.get("type") != "text" or not isinstance(p.get("text"), str):
                raise BadRequest(f"{where}: only text content parts are supported")
            parts.append(p["text"])
        return " ".join(parts)
    raise BadRequest(f"{where}: content must be a string or a list of text parts")


def _sampling_matches(body, name, value):
    if name not in body or body[name] is None:
        return
    v = body[name]
    if not isinstance(v, (int, float)) or isinstance(v, bool) or abs(float(v) - value) > 1e-9:
        raise BadRequest(f"'{name}': {v!r} asked, but this server samples every request with {name} {value} "
                         f"(set when it starts: --{name.replace('_', '-')})")


def parse_request(body, chat, served_model, sampling: Sampling, max_model_len):
    """Checks a decoded JSON body; returns what to generate or raises BadRequest."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model", served_model)
    if model != served_model:
        raise BadRequest(f"model '{model}' is not served here (this server serves '{served_model}')", status=404)
    for k in UNSUPPORTED:
        if k in body and body[k] is not None and not (k == "n" and body[k] == 1):
            raise BadRequest(f"'{k}' is not supported by the reference server")
    _sampling_matches(body, "temperature", sampling.temperature)
    _sampling_matches(body, "top_p", sampling.top_p)
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("'messages' must be a non-empty array")
        texts = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or "role" not in m or "content" not in m:
                raise BadRequest(f"messages[{i}] needs 'role' and 'content'")
            texts.append(_content_text(m["content"], f"messages[{i}]"))
        prompt = " ".join(texts)
    else:
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise BadRequest("'prompt' must be a string")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens", DEFAULT_MAX_TOKENS))
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise BadRequest(f"'max_tokens' must be an integer >= 1, not {max_tokens!r}")
    if max_tokens > max_model_len:
        raise BadRequest(f"'max_tokens' {max_tokens} exceeds the server's maximum length {max_model_len}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadRequest("'stream' must be true or false")
    opts = body.get("stream_options") or {}
    if not isinstance(opts, dict):
        raise BadRequest("'stream_options' must be an object")
    return ParsedRequest(chat=chat, prompt_text=prompt, max_tokens=max_tokens, stream=stream,
                         include_usage=bool(opts.get("include_usage", False)), model=served_model)


def usage(prompt_tokens, completion_tokens):
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


class ResponseShape:
    """The JSON of one request's chunks and response (ids, object names and timestamps fixed)."""

    def __init__(self, request_id, chat, model, created=None):
        self.id = ("chatcmpl-" if chat else "cmpl-") + request_id
        self.chat = chat
        self.model = model
        self.created = int(time.time()) if created is None else created

    def _head(self, obj):
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model}

    def role_chunk(self):
        """vLLM's first chat chunk: the assistant role, empty content (no token)."""
        d = self._head("chat.completion.chunk")
        d["choices"] = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                         "finish_reason": None}]
        return d

    def token_chunk(self, text, finish_reason=None):
        if self.chat:
            d = self._head("chat.completion.chunk")
            d["choices"] = [{"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": finish_reason}]
        else:
            d = self._head("text_completion")
            d["choices"] = [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}]
        return d

    def usage_chunk(self, prompt_tokens, completion_tokens):
        d = self._head("chat.completion.chunk" if self.chat else "text_completion")
        d["choices"] = []
        d["usage"] = usage(prompt_tokens, completion_tokens)
        return d

    def whole(self, text, finish_reason, prompt_tokens, completion_tokens):
        if self.chat:
            d = self._head("chat.completion")
            d["choices"] = [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                             "finish_reason": finish_reason}]
        else:
            d = self._head("text_completion")
            d["choices"] = [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}]
        d["usage"] = usage(prompt_tokens, completion_tokens)
        return d


def error_body(message, status):
    kind = {400: "BadRequestError", 404: "NotFoundError", 409: "ConflictError"}.get(status, "InternalServerError")
    return {"object": "error", "message": message, "type": kind, "code": status}


def sse(data) -> bytes:
    return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


SSE_DONE = b"data: [DONE]\n\n"
