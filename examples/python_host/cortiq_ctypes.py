#!/usr/bin/env python3
"""cortiq_ctypes: a Python host of libcortiq using only the standard library (ctypes).

As a module: Library(path) loads libcortiq.so; Model and Session wrap the C API (cortiq.h) and
raise CortiqError for a failed call.

    lib = Library("/opt/cortiq/lib/libcortiq.so")
    with lib.open_model("tiny.cortiq") as model, model.new_session(ctx_size=64) as session:
        session.eval([2, 17, 300])
        logits = session.logits()          # array('f') of vocab_size floats

Text (API 1.3): model.tokenize(text), model.detokenize(ids), model.chat_format(messages),
model.is_end_of_generation(id) (a plain completion's stop),
model.is_end_of_turn(id) (a chat turn's), Sampler(model, temperature=..., seed=...) and
Decoder(model); chat(model) is a small chat program over them (the `chat` command below).

    cortiq_ctypes.py [--lib LIBCORTIQ] chat MODEL.cortiq [--temp T] [--seed S] [-n N]

reads one user message per line from stdin and streams each reply to stdout (one line per
reply on a pipe), keeping the conversation in the session: each turn evaluates only the tokens
of the rendered conversation that the session does not already hold.

As a script it otherwise checks a compiled model against a golden case:

    cortiq_ctypes.py [--lib LIBCORTIQ] MODEL.cortiq TOKENS.json LOGITS_REF.f32

- the logits after every token match LOGITS_REF.f32 (float32 [T, vocab]) within 1e-3;
- save -> reset -> restore -> continue gives bit-identical logits to an uninterrupted run (in
  the same session and in a new one);
- bad input (a token id >= vocab_size, a corrupted state) is reported as an error.
Exit status 0 when everything holds.
"""

import argparse
import array
import ctypes
import ctypes.util
import os
import sys

# cortiq_status values (cortiq.h).
OK = 0
INVALID_ARGUMENT = 1
CONTEXT_FULL = 5
CORRUPT_DATA = 6
FAILED_PRECONDITION = 10


class CortiqError(Exception):
    """A failed C API call: .status (int), .status_name and the library's message."""

    def __init__(self, function, status, status_name, message):
        super().__init__(f"{function}: {status_name}: {message}")
        self.status = status
        self.status_name = status_name


class ModelInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("vocab_size", ctypes.c_int64),
        ("hidden_size", ctypes.c_int64),
        ("num_layers", ctypes.c_int64),
        ("max_context", ctypes.c_int64),
        ("sliding_window", ctypes.c_int64),
        ("weight_bytes", ctypes.c_uint64),
        ("file_bytes", ctypes.c_uint64),
        ("weight_formats", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


class SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("ctx_size", ctypes.c_size_t),
        ("threads", ctypes.c_int32),
        ("batch_size", ctypes.c_int64),  # API 1.1: prompt tokens per batched evaluation
    ]


class SamplerOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("temperature", ctypes.c_float),
        ("top_k", ctypes.c_int32),
        ("top_p", ctypes.c_float),
        ("min_p", ctypes.c_float),
        ("typical_p", ctypes.c_float),
        ("repeat_penalty", ctypes.c_float),
        ("repeat_last_n", ctypes.c_int32),
        ("frequency_penalty", ctypes.c_float),
        ("presence_penalty", ctypes.c_float),
        ("min_keep", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
    ]


class ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]


class Library:
    """libcortiq.so, with the prototypes of cortiq.h declared."""

    def __init__(self, path=None):
        path = path or os.environ.get("CORTIQ_LIBRARY") or ctypes.util.find_library("cortiq")
        if not path:
            raise OSError("libcortiq not found: pass its path or set CORTIQ_LIBRARY")
        self.lib = ctypes.CDLL(path)
        L, P, st = self.lib, ctypes.c_void_p, ctypes.c_int
        size_p = ctypes.POINTER(ctypes.c_size_t)
        floats = ctypes.POINTER(ctypes.c_float)
        protos = {
            "cortiq_api_version": (ctypes.c_uint32, []),
            "cortiq_status_string": (ctypes.c_char_p, [st]),
            "cortiq_last_error": (ctypes.c_char_p, []),
            "cortiq_model_open": (st, [ctypes.c_char_p, ctypes.POINTER(P)]),
            "cortiq_model_close": (None, [P]),
            "cortiq_model_get_info": (st, [P, ctypes.POINTER(ModelInfo)]),
            "cortiq_session_create": (st, [P, ctypes.POINTER(SessionOptions), ctypes.POINTER(P)]),
            "cortiq_session_free": (None, [P]),
            "cortiq_session_eval": (st, [P, ctypes.POINTER(ctypes.c_int32), ctypes.c_size_t,
                                         floats, ctypes.c_size_t]),
            "cortiq_session_logits": (st, [P, floats, ctypes.c_size_t]),
            "cortiq_session_length": (st, [P, size_p]),
            "cortiq_session_context_size": (st, [P, size_p]),
            "cortiq_session_reset": (st, [P]),
            "cortiq_session_truncate": (st, [P, ctypes.c_size_t]),
            "cortiq_session_state_size": (st, [P, size_p]),
            "cortiq_session_save": (st, [P, ctypes.c_void_p, ctypes.c_size_t]),
            "cortiq_session_restore": (st, [P, ctypes.c_void_p, ctypes.c_size_t]),
        }
        ints = ctypes.POINTER(ctypes.c_int32)
        text_protos = {  # API 1.3
            "cortiq_tokenize": (st, [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ints,
                                     ctypes.c_size_t, size_p]),
            "cortiq_detokenize": (st, [P, ints, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p,
                                       ctypes.c_size_t, size_p]),
            "cortiq_token_is_end_of_generation": (st, [P, ctypes.c_int32,
                                                       ctypes.POINTER(ctypes.c_int)]),
            "cortiq_token_is_end_of_turn": (st, [P, ctypes.c_int32,
                                                 ctypes.POINTER(ctypes.c_int)]),
            "cortiq_model_chat_format": (st, [P, ctypes.POINTER(ChatMessage), ctypes.c_size_t,
                                              ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                              ctypes.c_size_t, size_p]),
            "cortiq_sampler_default_options": (st, [P, ctypes.POINTER(SamplerOptions)]),
            "cortiq_sampler_create": (st, [P, ctypes.POINTER(SamplerOptions), ctypes.POINTER(P)]),
            "cortiq_sampler_sample": (st, [P, P, ints]),
            "cortiq_sampler_accept": (st, [P, ctypes.c_int32]),
            "cortiq_sampler_free": (None, [P]),
            "cortiq_decoder_create": (st, [P, ctypes.c_int, ctypes.POINTER(P)]),
            "cortiq_decoder_push": (st, [P, ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p),
                                         size_p]),
            "cortiq_decoder_finish": (st, [P, ctypes.POINTER(ctypes.c_char_p), size_p]),
            "cortiq_decoder_free": (None, [P]),
        }
        if (self.lib.cortiq_api_version() & 0xFFFF) >= 3:  # an older library has no text calls
            protos.update(text_protos)
        for name, (restype, argtypes) in protos.items():
            fn = getattr(L, name)
            fn.restype = restype
            fn.argtypes = argtypes
        major = self.lib.cortiq_api_version() >> 16
        if major != 1:
            raise OSError(f"{path}: libcortiq API major {major}; this host speaks 1")

    def check(self, function, status):
        if status != OK:
            raise CortiqError(function, status,
                              self.lib.cortiq_status_string(status).decode(),
                              self.lib.cortiq_last_error().decode(errors="replace"))

    def call(self, name, *args):
        self.check(name, getattr(self.lib, name)(*args))

    def open_model(self, path):
        return Model(self, path)


class Model:
    """An opened artifact (cortiq_model)."""

    def __init__(self, library, path):
        self.library = library
        self.handle = ctypes.c_void_p()
        library.call("cortiq_model_open", os.fsencode(path), ctypes.byref(self.handle))
        info = ModelInfo(struct_size=ctypes.sizeof(ModelInfo))
        library.call("cortiq_model_get_info", self.handle, ctypes.byref(info))
        self.info = info

    def new_session(self, ctx_size=0, threads=0, batch_size=0):
        return Session(self, ctx_size, threads, batch_size)

    def tokenize(self, text, add_special=True):
        """The ids of `text` (str), <bos> first with add_special (not doubled)."""
        data = text.encode()
        n = ctypes.c_size_t()
        self.library.call("cortiq_tokenize", self.handle, data, len(data), int(add_special),
                          None, 0, ctypes.byref(n))
        ids = (ctypes.c_int32 * n.value)()
        self.library.call("cortiq_tokenize", self.handle, data, len(data), int(add_special),
                          ids, n.value, ctypes.byref(n))
        return list(ids)

    def detokenize(self, ids, skip_special=False):
        arr = (ctypes.c_int32 * len(ids))(*ids)
        n = ctypes.c_size_t()
        self.library.call("cortiq_detokenize", self.handle, arr, len(ids), int(skip_special),
                          None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        self.library.call("cortiq_detokenize", self.handle, arr, len(ids), int(skip_special),
                          buf, n.value + 1, ctypes.byref(n))
        return buf.raw[:n.value].decode(errors="replace")

    def chat_format(self, messages, add_generation_prompt=True, thinking=False):
        """`messages`: [(role, content)] -> the prompt text in the model's chat format."""
        arr = (ChatMessage * len(messages))(
            *[ChatMessage(r.encode(), c.encode()) for r, c in messages])
        n = ctypes.c_size_t()
        args = (self.handle, arr, len(messages), int(add_generation_prompt), int(thinking))
        self.library.call("cortiq_model_chat_format", *args, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        self.library.call("cortiq_model_chat_format", *args, buf, n.value + 1, ctypes.byref(n))
        return buf.raw[:n.value].decode()

    def is_end_of_generation(self, token):
        """True if a plain completion stops at token (cortiq_token_is_end_of_generation)."""
        result = ctypes.c_int()
        self.library.call("cortiq_token_is_end_of_generation", self.handle, token,
                          ctypes.byref(result))
        return bool(result.value)

    def is_end_of_turn(self, token):
        """True if the model's chat turn ends at token (cortiq_token_is_end_of_turn)."""
        result = ctypes.c_int()
        self.library.call("cortiq_token_is_end_of_turn", self.handle, token,
                          ctypes.byref(result))
        return bool(result.value)

    def close(self):
        if self.handle:
            self.library.lib.cortiq_model_close(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _float_ptr(buffer):
    return (ctypes.c_float * len(buffer)).from_buffer(buffer)


class Session:
    """One sequence (cortiq_session). Logits are array('f') objects."""

    def __init__(self, model, ctx_size=0, threads=0, batch_size=0):
        """batch_size: 0 = the artifact's compiled maximum (batched prefill), 1 = token by token."""
        self.library = model.library
        self.vocab_size = model.info.vocab_size
        self.handle = ctypes.c_void_p()
        options = SessionOptions(struct_size=ctypes.sizeof(SessionOptions), ctx_size=ctx_size,
                                 threads=threads, batch_size=batch_size)
        self.library.call("cortiq_session_create", model.handle, ctypes.byref(options),
                          ctypes.byref(self.handle))

    def eval(self, tokens, all_logits=False):
        """Evaluates `tokens`; returns the logits after each one (flat [n, vocab]) if asked."""
        ids = (ctypes.c_int32 * len(tokens))(*tokens)
        if not all_logits:
            self.library.call("cortiq_session_eval", self.handle, ids, len(tokens), None, 0)
            return None
        out = array.array("f", bytes(4 * len(tokens) * self.vocab_size))
        self.library.call("cortiq_session_eval", self.handle, ids, len(tokens), _float_ptr(out),
                          len(out))
        return out

    def logits(self):
        out = array.array("f", bytes(4 * self.vocab_size))
        self.library.call("cortiq_session_logits", self.handle, _float_ptr(out), len(out))
        return out

    def _size(self, name):
        value = ctypes.c_size_t()
        self.library.call(name, self.handle, ctypes.byref(value))
        return value.value

    def length(self):
        return self._size("cortiq_session_length")

    def context_size(self):
        return self._size("cortiq_session_context_size")

    def reset(self):
        self.library.call("cortiq_session_reset", self.handle)

    def truncate(self, length):
        self.library.call("cortiq_session_truncate", self.handle, length)

    def save(self):
        """The session's state as bytes (cortiq_session_state_size + cortiq_session_save)."""
        buf = ctypes.create_string_buffer(self._size("cortiq_session_state_size"))
        self.library.call("cortiq_session_save", self.handle, buf, len(buf))
        return buf.raw

    def restore(self, state):
        buf = ctypes.create_string_buffer(bytes(state), len(state))
        self.library.call("cortiq_session_restore", self.handle, buf, len(state))

    def close(self):
        if self.handle:
            self.library.lib.cortiq_session_free(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- Golden check (script mode) -------------------------------------------------------------

class Sampler:
    """cortiq_sampler: the model's sampling defaults, overridden by keyword (temperature=0 is
    greedy; seed=None a random seed)."""

    def __init__(self, model, seed=None, **overrides):
        self.library = model.library
        options = SamplerOptions()
        self.library.call("cortiq_sampler_default_options", model.handle, ctypes.byref(options))
        for name, value in overrides.items():
            setattr(options, name, value)
        if seed is not None:
            options.seed = seed
        self.handle = ctypes.c_void_p()
        self.library.call("cortiq_sampler_create", model.handle, ctypes.byref(options),
                          ctypes.byref(self.handle))

    def sample(self, session):
        token = ctypes.c_int32()
        self.library.call("cortiq_sampler_sample", self.handle, session.handle,
                          ctypes.byref(token))
        return token.value

    def accept(self, token):
        self.library.call("cortiq_sampler_accept", self.handle, token)

    def close(self):
        if self.handle:
            self.library.lib.cortiq_sampler_free(self.handle)
            self.handle = ctypes.c_void_p()


class Decoder:
    """cortiq_decoder: generated ids in, whole UTF-8 characters out."""

    def __init__(self, model, skip_special=True):
        self.library = model.library
        self.handle = ctypes.c_void_p()
        self.library.call("cortiq_decoder_create", model.handle, int(skip_special),
                          ctypes.byref(self.handle))

    def _text(self, name, *args):
        text, n = ctypes.c_char_p(), ctypes.c_size_t()
        self.library.call(name, self.handle, *args, ctypes.byref(text), ctypes.byref(n))
        return ctypes.string_at(text, n.value).decode()

    def push(self, token):
        return self._text("cortiq_decoder_push", token)

    def finish(self):
        return self._text("cortiq_decoder_finish")

    def close(self):
        if self.handle:
            self.library.lib.cortiq_decoder_free(self.handle)
            self.handle = ctypes.c_void_p()


def chat(model, lines, out, temperature=None, seed=None, max_tokens=-1, ctx_size=4096):
    """A chat over `lines` (user messages): each reply streamed to `out`, then a newline.
    Returns the number of tokens each turn evaluated."""
    overrides = {} if temperature is None else {"temperature": temperature}
    sampler = Sampler(model, seed=seed, **overrides)
    history, evaluated = [], []
    with model.new_session(ctx_size=ctx_size) as session:
        cached = []  # the ids the session holds
        for line in lines:
            history.append(("user", line.rstrip("\n")))
            prompt = model.tokenize(model.chat_format(history))
            keep = 0
            while keep < min(len(cached), len(prompt) - 1) and cached[keep] == prompt[keep]:
                keep += 1
            session.truncate(keep)
            session.eval(prompt[keep:])
            evaluated.append(len(prompt) - keep)
            cached = list(prompt)
            for token in prompt:
                sampler.accept(token)
            decoder, reply = Decoder(model, skip_special=False), []
            while max_tokens < 0 or len(reply) < max_tokens:
                token = sampler.sample(session)
                sampler.accept(token)
                if model.is_end_of_turn(token):
                    break
                reply.append(token)
                out.write(decoder.push(token))
                out.flush()
                if session.length() >= session.context_size():
                    break
                session.eval([token])
                cached.append(token)
            out.write(decoder.finish() + "\n")
            out.flush()
            decoder.close()
            history.append(("assistant", model.detokenize(reply)))
    sampler.close()
    return evaluated


def _read_tokens(path):
    with open(path) as f:
        text = f.read()
    return [int(t) for t in text.replace("[", " ").replace("]", " ").replace(",", " ").split()]


def _max_diff(a, b):
    return max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) else float("inf")


def _expect_error(status, action):
    try:
        action()
    except CortiqError as e:
        if e.status != status:
            raise AssertionError(f"expected status {status}, got {e}") from e
        return str(e)
    raise AssertionError(f"expected status {status}, the call succeeded")


LIB_HELP = ("path of libcortiq.so (default: $CORTIQ_LIBRARY, then the system's library search; "
            "a build has it at build/lib/libcortiq.so, an install at PREFIX/lib/libcortiq.so)")


def _load_library(path):
    """Library(path), or exit with a message (no traceback) saying how to give the library."""
    try:
        return Library(path)
    except OSError as e:
        where = f"cannot load {path}: {e}" if path else "libcortiq.so not found"
        sys.exit(f"{os.path.basename(sys.argv[0])}: {where}; give its path with "
                 "--lib /path/to/libcortiq.so (build/lib/libcortiq.so after a build) or set "
                 "CORTIQ_LIBRARY")


def chat_main(argv):
    parser = argparse.ArgumentParser(
        prog=f"{os.path.basename(sys.argv[0])} chat",
        description="chat with a compiled model over libcortiq: one user message per line on "
        "stdin, each reply streamed to stdout")
    parser.add_argument("--lib", help=LIB_HELP)
    parser.add_argument("model")
    parser.add_argument("--temp", type=float, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("-n", type=int, default=-1, help="tokens per reply at most")
    parser.add_argument("-c", type=int, default=4096, help="context size")
    args = parser.parse_args(argv)
    library = _load_library(args.lib)
    with library.open_model(args.model) as model:
        evaluated = chat(model, sys.stdin, sys.stdout, args.temp, args.seed, args.n, args.c)
    print(f"prompt tokens evaluated per turn: {evaluated}", file=sys.stderr)
    return 0


def main(argv):
    if "chat" in argv[:3]:
        i = argv.index("chat")
        return chat_main(argv[:i] + argv[i + 1:])
    prog = os.path.basename(sys.argv[0])
    parser = argparse.ArgumentParser(
        description="checks a compiled model against a golden case over libcortiq (logits, "
        "save/restore, errors); the chat subcommand chats with it",
        usage=f"{prog} [--lib LIBCORTIQ] MODEL.cortiq TOKENS.json LOGITS_REF.f32\n"
        f"       {prog} [--lib LIBCORTIQ] chat MODEL.cortiq [--temp T] [--seed S] [-n N] [-c N]",
        epilog=f"subcommands:\n  chat    chat with MODEL.cortiq: one user message per line on "
        f"stdin, each reply on stdout ({prog} chat --help)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", help=LIB_HELP)
    parser.add_argument("model")
    parser.add_argument("tokens")
    parser.add_argument("logits_ref")
    args = parser.parse_args(argv)

    library = _load_library(args.lib)
    tokens = _read_tokens(args.tokens)
    ref = array.array("f")
    with open(args.logits_ref, "rb") as f:
        ref.frombytes(f.read())
    if sys.byteorder != "little":
        ref.byteswap()
    failures = []

    def check(ok, message):
        print(("ok:   " if ok else "FAIL: ") + message)
        if not ok:
            failures.append(message)

    with library.open_model(args.model) as model:
        vocab, n = model.info.vocab_size, len(tokens)
        print(f"model: vocab {vocab}, {model.info.num_layers} layers, window "
              f"{model.info.sliding_window}, context {model.info.max_context}")
        check(len(ref) == n * vocab, f"reference holds [{n}, {vocab}] floats")

        # 1. Golden logits after every token.
        with model.new_session(ctx_size=n) as session:
            rows = session.eval(tokens, all_logits=True)
            diff = _max_diff(rows, ref)
            check(diff <= 1e-3, f"logits of {n} positions vs reference: max |diff| {diff:.3g}")
            check(session.logits() == rows[(n - 1) * vocab:],
                  "cortiq_session_logits equals the last row")

        # 2. save -> reset -> restore -> continue == uninterrupted.
        split = n // 2
        with model.new_session(ctx_size=n) as session:
            session.eval(tokens[:split])
            logits_at_split = session.logits()
            state = session.save()
            uninterrupted = session.eval(tokens[split:], all_logits=True)
            session.reset()
            check(session.length() == 0, "reset: length 0")
            session.restore(state)
            check(session.length() == split, f"restore: length {split}")
            check(session.logits() == logits_at_split, "restore: the saved last logits")
            continued = session.eval(tokens[split:], all_logits=True)
            check(continued == uninterrupted,
                  f"save at {split} -> reset -> restore -> {n - split} more tokens: "
                  "bit-identical to the uninterrupted run")
            check(_max_diff(continued, ref[split * vocab:]) <= 1e-3,
                  "continued logits vs reference within 1e-3")
            with model.new_session(ctx_size=n, threads=2) as other:
                other.restore(state)
                check(other.eval(tokens[split:], all_logits=True) == uninterrupted,
                      "restore into a new session (2 threads): bit-identical continuation")

            # 3. Errors, not crashes. The context is full here (checked before the ids are read).
            message = _expect_error(CONTEXT_FULL, lambda: session.eval([vocab]))
            check(True, f"eval past the context rejected ({message})")
            session.truncate(n - 1)
            message = _expect_error(INVALID_ARGUMENT, lambda: session.eval([vocab]))
            check(True, f"token id {vocab} rejected ({message})")
            corrupted = bytearray(state)
            corrupted[len(corrupted) // 2] ^= 0x10
            message = _expect_error(CORRUPT_DATA, lambda: session.restore(corrupted))
            check(True, f"corrupted state rejected ({message})")
            session.reset()
            _expect_error(FAILED_PRECONDITION, session.logits)
            check(True, "no logits after reset")

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
