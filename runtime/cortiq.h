/* cortiq.h: the C API of the cortiq runtime (libcortiq.so): open a compiled model (MODEL.cortiq)
 * and drive it (prompts in batches, generation token by token) from any language with a C FFI.
 * Pure C99; runtime/cortiq.hpp
 * holds RAII C++ wrappers.
 *
 * Conventions
 * - Opaque handles: cortiq_model (an opened artifact: mapped read-only, its matrices or all
 *   of it read into private memory with cortiq_model_open_with_options) and cortiq_session (one
 *   sequence: its KV caches, activation arena and threads).
 * - Every function that can fail returns a cortiq_status; on failure cortiq_last_error() gives a
 *   message and output parameters are left unchanged. Only cortiq_api_version,
 *   cortiq_status_string, cortiq_last_error, cortiq_model_close and cortiq_session_free return
 *   something else (they cannot fail).
 * - Nothing is thrown across the API: C++ exceptions (e.g. std::bad_alloc) become status codes.
 *   NULL handles or pointers, short buffers, token ids outside [0, vocab_size), a full context
 *   and malformed artifacts or state buffers are reported as errors, never crashes.
 * - Units: token ids are int32; positions, lengths and context sizes count tokens; logits are
 *   float32 (counts of floats); state buffers and model sizes are in bytes.
 *
 * Thread safety
 * - A cortiq_model is immutable: any number of threads may create and run sessions on it
 *   concurrently. Closing it is deferred until its last session is freed.
 * - A cortiq_session holds one sequence; use it from one thread at a time (one session per
 *   thread). It may migrate between threads. Overlapping calls on the same session are detected
 *   and fail with CORTIQ_STATUS_BUSY without touching it.
 * - Every call on a session checks, in this order: the session handle (NULL:
 *   INVALID_ARGUMENT), that no other call is running on it (BUSY: reported before any other
 *   argument is looked at, so a busy call given a NULL pointer fails with BUSY), then its other
 *   arguments.
 * - cortiq_last_error() is per thread.
 * - fork(): models and sessions created before a fork() can be used in the child (each process
 *   then has its own copy of a session); a session's worker threads are started anew in the
 *   child on its first evaluation. Do not fork while a call on a session is running.
 */
#ifndef CORTIQ_H_
#define CORTIQ_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CORTIQ_API __attribute__((visibility("default")))
#else
#define CORTIQ_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* API version: a new major breaks source or binary compatibility; a new minor only adds. A host
 * compiled against major M works with a library whose cortiq_api_version() has major M and an
 * equal or newer minor. */
#define CORTIQ_API_VERSION_MAJOR 1
/* 1.1: cortiq_session_options.batch_size. 1.2: cortiq_model_verify. 1.3: text — tokenize,
 * detokenize, token pieces, a stream decoder, special tokens, the end-of-generation and
 * end-of-turn checks, the chat format — and the sampler. 1.4: cortiq_model_open_with_options
 * (how the weights are loaded). 1.5: the thought channel's tokens (CORTIQ_TOKEN_CHANNEL_OPEN,
 * CORTIQ_TOKEN_CHANNEL_CLOSE). */
#define CORTIQ_API_VERSION_MINOR 5
#define CORTIQ_API_VERSION ((CORTIQ_API_VERSION_MAJOR << 16) | CORTIQ_API_VERSION_MINOR)

/* Status codes. Values are part of the ABI and never change. */
typedef enum cortiq_status {
  CORTIQ_STATUS_OK = 0,
  CORTIQ_STATUS_INVALID_ARGUMENT = 1,    /* NULL handle/pointer, bad option, short buffer,
                                            token id outside [0, vocab_size), a request the
                                            library does not support (a tool message) */
  CORTIQ_STATUS_NOT_FOUND = 2,           /* the model file does not exist */
  CORTIQ_STATUS_PERMISSION_DENIED = 3,   /* the model file cannot be read */
  CORTIQ_STATUS_OUT_OF_RANGE = 4,        /* truncate beyond the length; a state longer than the
                                            session's context */
  CORTIQ_STATUS_CONTEXT_FULL = 5,        /* eval would go past the session's context size */
  CORTIQ_STATUS_CORRUPT_DATA = 6,        /* not a (valid) artifact or state buffer */
  CORTIQ_STATUS_UNSUPPORTED_VERSION = 7, /* artifact or state written by a newer cortiq */
  CORTIQ_STATUS_MODEL_MISMATCH = 8,      /* state saved from a different model */
  CORTIQ_STATUS_NUMERIC_ERROR = 9,       /* non-finite logits (NaN/Inf weights or overflow) */
  CORTIQ_STATUS_FAILED_PRECONDITION = 10, /* e.g. logits asked for before any eval */
  CORTIQ_STATUS_BUSY = 11,               /* another call on this session is running */
  CORTIQ_STATUS_OUT_OF_MEMORY = 12,      /* an allocation failed or its size overflows */
  CORTIQ_STATUS_IO_ERROR = 13,           /* reading or mapping the file failed */
  CORTIQ_STATUS_INTERNAL = 14            /* a bug in cortiq */
} cortiq_status;

/* Weight storage formats, as bits of cortiq_model_info.weight_formats: bit n is the artifact's
 * format value n (runtime/plan.h WeightFormat); the block formats are llama.cpp's (GGUF type
 * names). */
#define CORTIQ_WEIGHT_F32 (1u << 0)
#define CORTIQ_WEIGHT_BF16 (1u << 1)
#define CORTIQ_WEIGHT_Q8_0 (1u << 2) /* llama.cpp Q8_0 blocks */
#define CORTIQ_WEIGHT_Q4_0 (1u << 3) /* llama.cpp Q4_0 blocks */
#define CORTIQ_WEIGHT_F16 (1u << 4)  /* IEEE binary16 */
#define CORTIQ_WEIGHT_Q4_1 (1u << 5)
#define CORTIQ_WEIGHT_Q5_0 (1u << 6)
#define CORTIQ_WEIGHT_Q5_1 (1u << 7)
#define CORTIQ_WEIGHT_Q2_K (1u << 8)
#define CORTIQ_WEIGHT_Q3_K (1u << 9)
#define CORTIQ_WEIGHT_Q4_K (1u << 10)
#define CORTIQ_WEIGHT_Q5_K (1u << 11)
#define CORTIQ_WEIGHT_Q6_K (1u << 12)
#define CORTIQ_WEIGHT_IQ4_NL (1u << 13)
#define CORTIQ_WEIGHT_IQ4_XS (1u << 14)

typedef struct cortiq_model cortiq_model;     /* an opened artifact */
typedef struct cortiq_session cortiq_session; /* one sequence being decoded */
typedef struct cortiq_sampler cortiq_sampler; /* API 1.3: one sequence's sampler chain */
typedef struct cortiq_decoder cortiq_decoder; /* API 1.3: streamed ids -> whole UTF-8 text */

/* Facts about an opened model. The caller sets struct_size = sizeof(cortiq_model_info) (its own
 * version of the struct): the library fills the fields it knows that fit and zeroes the rest. */
typedef struct cortiq_model_info {
  size_t struct_size;      /* bytes: sizeof(cortiq_model_info) as the caller compiled it */
  int64_t vocab_size;      /* logits per token; valid token ids are [0, vocab_size) */
  int64_t hidden_size;     /* width of the hidden state (floats) */
  int64_t num_layers;      /* decoder layers; taps are named "layer.0" .. */
  int64_t max_context;     /* positions: the model's max_position_embeddings */
  int64_t sliding_window;  /* positions seen by sliding-attention layers, 0 if none */
  uint64_t weight_bytes;   /* bytes of the weight section */
  uint64_t file_bytes;     /* bytes of the artifact file */
  uint32_t weight_formats; /* CORTIQ_WEIGHT_* bits of the formats the weights use */
  uint32_t reserved;       /* 0 */
} cortiq_model_info;

/* API 1.4: how cortiq_model_open_with_options makes the weights available. Values are part of
 * the ABI. */
typedef enum cortiq_load {
  /* Map the file (cortiq_model_open): instant open, pages shared with other processes through
   * the page cache, read from disk on first use. */
  CORTIQ_LOAD_MAP = 0,
  /* Map the file, then read the matrices multiplied every token into private memory (huge
   * pages where the kernel gives them) in place of their mapped pages; lookup-only tables
   * (the embedding tables) stay mapped. The command-line tools' default: decode streams private
   * memory faster than page-cache pages on some hosts (bench/README.md "Loading the weights").
   * Costs a read of the matrices at open and their size in private memory. */
  CORTIQ_LOAD_READ_MATRICES = 1,
  /* Read the whole file into private memory (the tools' --no-mmap). */
  CORTIQ_LOAD_READ = 2
} cortiq_load;

/* API 1.4: options of cortiq_model_open_with_options. Start from cortiq_model_options_default().
 * Fields a newer header adds must be zero when given to an older library (else
 * CORTIQ_STATUS_INVALID_ARGUMENT). */
typedef struct cortiq_model_options {
  size_t struct_size; /* bytes: sizeof(cortiq_model_options) as the caller compiled it */
  int32_t load;       /* a cortiq_load value */
  int32_t reserved;   /* 0 */
} cortiq_model_options;

/* The default model options (CORTIQ_LOAD_READ_MATRICES, as the tools), with struct_size set. */
static inline cortiq_model_options cortiq_model_options_default(void) {
  cortiq_model_options options = {sizeof(cortiq_model_options), CORTIQ_LOAD_READ_MATRICES, 0};
  return options;
}

/* Options of cortiq_session_create. Start from cortiq_session_options_default(). Fields a newer
 * header adds after the last one below must be zero when given to an older library (else
 * CORTIQ_STATUS_INVALID_ARGUMENT); a struct from an older header (API 1.0: up to `threads`) is
 * accepted, its missing fields taken as 0. */
typedef struct cortiq_session_options {
  size_t struct_size; /* bytes: sizeof(cortiq_session_options) as the caller compiled it */
  size_t ctx_size;    /* positions the session can hold (0 = 4096, unlike the tools' -c 0,
                         which is the model's maximum); clamped to max_context */
  int32_t threads;    /* threads for the matrix products and attention, 1..256 (0 = 1); logits
                         are bit-identical for every count */
  int64_t batch_size; /* API 1.1: tokens per batched evaluation (prefill) in cortiq_session_eval,
                         0 = the artifact's compiled maximum, 1 = token by token; clamped to
                         that maximum. Batched logits equal token-by-token ones up to the
                         rounding of the matrix products (README: 1e-4 on the golden models). */
} cortiq_session_options;

/* The default options (ctx_size 4096 clamped to the model, 1 thread, the compiled batch size),
 * with struct_size set. */
static inline cortiq_session_options cortiq_session_options_default(void) {
  cortiq_session_options options = {sizeof(cortiq_session_options), 0, 0, 0};
  return options;
}

/* Called by cortiq_session_eval after each evaluated token, once per tap of the model (taps are
 * the hidden states after each decoder layer, named "layer.N"). `data` holds `count` floats
 * (hidden_size) and is valid during the call only; `position` is the token's position. The
 * callback must not call into the same session (that fails with CORTIQ_STATUS_BUSY). */
typedef void (*cortiq_observer_fn)(void* user_data, const char* name, int64_t position,
                                   const float* data, size_t count);

/* ---- Library ---------------------------------------------------------------------------- */

/* The library's API version, (major << 16) | minor; compare the major with
 * CORTIQ_API_VERSION_MAJOR. */
CORTIQ_API uint32_t cortiq_api_version(void);

/* A static, human-readable name for `status` ("OK", "INVALID_ARGUMENT", ...); "UNKNOWN" for
 * values not in the enum. */
CORTIQ_API const char* cortiq_status_string(cortiq_status status);

/* The message of the last failed call made on this thread, naming the function ("" once a
 * call returned CORTIQ_STATUS_OK). The pointer stays valid until the next cortiq call on this
 * thread. Never NULL. */
CORTIQ_API const char* cortiq_last_error(void);

/* ---- Models ----------------------------------------------------------------------------- */

/* Maps and validates the artifact at `path` (a file written by cortiq-compile) and stores a new
 * handle in *model. Validation reads the header and plan only (O(metadata)), plus a few pages of
 * the weights for the model's identity. Errors: INVALID_ARGUMENT (NULL path/model),
 * NOT_FOUND, PERMISSION_DENIED, CORRUPT_DATA (not a regular file, not an artifact, truncated,
 * checksum or plan invalid), UNSUPPORTED_VERSION (newer format), OUT_OF_MEMORY, IO_ERROR. */
CORTIQ_API cortiq_status cortiq_model_open(const char* path, cortiq_model** model);

/* API 1.4. cortiq_model_open with `options` (NULL = cortiq_model_options_default(): the matrices
 * read into memory, as the command-line tools). Logits are the same bits with every load. The
 * READ loads read their bytes at open (the checks before read the header and plan, as
 * cortiq_model_open), so opening takes the time of reading them (~1 s per 3 GB from the page
 * cache).
 * Errors: those of cortiq_model_open, and INVALID_ARGUMENT (struct_size too small or too large,
 * a non-zero reserved or unknown field, `load` not a cortiq_load value); OUT_OF_MEMORY when the
 * private memory for a read cannot be allocated (CORTIQ_LOAD_MAP needs none). */
CORTIQ_API cortiq_status cortiq_model_open_with_options(const char* path,
                                                        const cortiq_model_options* options,
                                                        cortiq_model** model);

/* Releases the caller's handle. Sessions created from it stay valid (the weights' memory is
 * released when the last of them is freed). NULL is ignored. */
CORTIQ_API void cortiq_model_close(cortiq_model* model);

/* Fills *info (see cortiq_model_info). Errors: INVALID_ARGUMENT (NULL model/info, or
 * info->struct_size smaller than the API 1.0 struct). */
CORTIQ_API cortiq_status cortiq_model_get_info(const cortiq_model* model,
                                               cortiq_model_info* info);

/* API 1.2. Reads every weight of the model and checks it against the hashes the compiler wrote
 * with it (artifact format 3.1: the XXH3-64 of each 1 MiB chunk of each weight), on `threads`
 * threads (0 = 1). cortiq_model_open does not do this (it reads the header and plan only, whose
 * checksum does not cover the weights): call it once after opening where a damaged file must not
 * give silently wrong logits. Cost: every weight byte read once (about 0.1 s per GB on one core
 * from the page cache); safe to call while sessions run on the model. Errors: INVALID_ARGUMENT
 * (NULL model, threads outside 0..256), CORRUPT_DATA (the message names every damaged weight and
 * its byte range), FAILED_PRECONDITION (the artifact has no weight hashes: written before format
 * 3.1; recompile it to verify it). */
CORTIQ_API cortiq_status cortiq_model_verify(const cortiq_model* model, int32_t threads);

/* ---- Sessions --------------------------------------------------------------------------- */

/* Creates a session on `model` with `options` (NULL = cortiq_session_options_default()) and
 * stores it in *session. Allocates the arena, the KV caches (full-attention caches hold
 * ctx_size rows, sliding ones min(window + batch_size - 1, ctx_size)) and the token history (4 bytes per
 * position); nothing is allocated per token afterwards. Errors: INVALID_ARGUMENT (NULL
 * model/session, struct_size too small or unknown non-zero fields, threads outside 0..256,
 * batch_size < 0),
 * OUT_OF_MEMORY. */
CORTIQ_API cortiq_status cortiq_session_create(cortiq_model* model,
                                               const cortiq_session_options* options,
                                               cortiq_session** session);

/* Frees the session (and the model, if it was closed and this was its last session). NULL is
 * ignored. */
CORTIQ_API void cortiq_session_free(cortiq_session* session);

/* Evaluates n_tokens token ids at positions length .. length + n_tokens - 1 and advances the
 * length by n_tokens. Afterwards cortiq_session_logits gives the last token's logits. If
 * all_logits is not NULL, row i of all_logits ([n_tokens, vocab_size] float32, row-major) gets
 * the logits after tokens[i]; all_logits_count is its capacity in floats and must be >=
 * n_tokens * vocab_size (ignored when all_logits is NULL). Without all_logits only the last
 * token runs the LM head. The tokens go through the batched plan in chunks of the session's
 * batch_size (one chunk: every weight read once; logits equal to token-by-token evaluation up
 * to the rounding of the matrix products); a chunk of one token is evaluated token by token. n_tokens = 0 does nothing. The
 * observer, if set, is called after each token. Errors (nothing evaluated): INVALID_ARGUMENT
 * (NULL session, NULL tokens with n_tokens > 0, short all_logits, a token id outside
 * [0, vocab_size): the message names its index and value), CONTEXT_FULL (length + n_tokens >
 * context size; checked before any token id is read, so a count larger than the array is never
 * read past), BUSY. NUMERIC_ERROR if a computed logit is NaN/Inf: the tokens before the failing
 * one stay evaluated (their all_logits rows written, the observer called for them; see
 * cortiq_session_length), the failing one and those after it are not, and no logits are
 * available. With all_logits every token's logits are computed and the failing token is the
 * first with a non-finite logit; without, only the last token's are computed and checked, so a
 * failure is the last token's: the n_tokens - 1 before it stay evaluated. */
CORTIQ_API cortiq_status cortiq_session_eval(cortiq_session* session, const int32_t* tokens,
                                             size_t n_tokens, float* all_logits,
                                             size_t all_logits_count);

/* Copies the logits of the last evaluated token (vocab_size floats) to out, whose capacity is
 * `count` floats. Available after a successful eval of at least one token, and after restoring
 * a state saved while they were available; not after create, reset, truncate (to a shorter
 * length) or a failed eval. Errors: INVALID_ARGUMENT (NULL session/out, count < vocab_size),
 * FAILED_PRECONDITION (no logits available), BUSY. */
CORTIQ_API cortiq_status cortiq_session_logits(cortiq_session* session, float* out,
                                               size_t count);

/* Stores in *length the number of positions evaluated (the next token's position). Errors:
 * INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_session_length(cortiq_session* session, size_t* length);

/* Stores in *ctx_size the session's context size in positions (options.ctx_size after
 * defaults and clamping). Errors: INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_session_context_size(cortiq_session* session, size_t* ctx_size);

/* Starts a new sequence at position 0 (O(1): caches are not cleared, rows are only read after
 * being rewritten). Errors: INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_session_reset(cortiq_session* session);

/* Forgets every position >= `length` (0 <= length <= current length): the next eval sees
 * exactly what a session that evaluated only the first `length` tokens sees (bit-identical
 * logits), for every length. Full-attention caches keep every position, but sliding-attention
 * layers keep a ring of `window` rows, in which positions >= length may have overwritten rows
 * that the positions after the cut still need (length - window + 1 .. length - 1). The session
 * keeps its token history and then recomputes the caches by re-evaluating tokens 0 .. length-1
 * without the LM head (up to `length` token evaluations; the full-attention layers and the
 * stacked windows make every later row depend on every earlier token, so it starts at 0). That
 * happens when the session went more than one position past `length` and more than `window`
 * positions in all since those rows were computed; otherwise (e.g. cutting one token, or a
 * sequence that never exceeded `window`) truncation is O(1). length = 0 is a reset. Logits
 * are not available afterwards (unless length is the current length) until the next eval.
 * Errors: INVALID_ARGUMENT (NULL), OUT_OF_RANGE (length > current length), BUSY. */
CORTIQ_API cortiq_status cortiq_session_truncate(cortiq_session* session, size_t length);

/* Stores in *size the bytes cortiq_session_save needs for the session's current state: a
 * header, the KV rows the sequence still uses (every position for full-attention caches, at
 * most `window` positions for sliding ones), the token history and, if available, the last
 * logits. Errors: INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_session_state_size(cortiq_session* session, size_t* size);

/* Writes the session's state into buf (capacity `size` bytes, >= cortiq_session_state_size;
 * exactly that many bytes are written). The state records the model's identity (its plan
 * checksum and a digest of sampled weight pages), a format version and a checksum of its
 * contents; it is in host byte order. Errors: INVALID_ARGUMENT (NULL session/buf, size too
 * small), BUSY. */
CORTIQ_API cortiq_status cortiq_session_save(cortiq_session* session, void* buf, size_t size);

/* Replaces the session's state by one written by cortiq_session_save, for the same model, in
 * this or another session (of any context size that holds its length and any thread count);
 * `size` must be the saved size. Everything is checked before anything changes: on error the
 * session is untouched. Errors: INVALID_ARGUMENT (NULL session/buf, size differs from the
 * state's recorded size), CORRUPT_DATA (not a cortiq state, checksum mismatch, inconsistent
 * contents), UNSUPPORTED_VERSION (newer state format, other byte order), MODEL_MISMATCH,
 * OUT_OF_RANGE (state longer than this session's context), BUSY. */
CORTIQ_API cortiq_status cortiq_session_restore(cortiq_session* session, const void* buf,
                                                size_t size);

/* Sets (or with fn = NULL removes) the observer called by cortiq_session_eval after each token
 * (see cortiq_observer_fn). Truncate and restore do not call it. Errors: INVALID_ARGUMENT
 * (NULL session), BUSY. */
CORTIQ_API cortiq_status cortiq_session_set_observer(cortiq_session* session,
                                                     cortiq_observer_fn fn, void* user_data);

/* ---- Text (API 1.3) ----------------------------------------------------------------------
 * The model's own tokenizer, carried inside the artifact (compiled from the checkpoint's
 * tokenizer.json or a GGUF's tokenizer.ggml.* keys): Hugging Face `tokenizers` ids. A model
 * compiled without a tokenizer (or by a cortiq before artifact format 3.1) opens as before; its
 * text calls fail with FAILED_PRECONDITION ("the model has no tokenizer"). Text is UTF-8 and is
 * given with its length in bytes (it need not be NUL-terminated; it may contain NUL bytes).
 *
 * Output buffers follow one pattern: with a NULL buffer the call stores the size it needs and
 * returns OK (the query); with a buffer too small it fails with INVALID_ARGUMENT naming the
 * size needed and writes nothing. Text outputs get a terminating NUL after `*length` bytes, so
 * they need *length + 1 bytes. */

/* Kinds of special tokens (cortiq_model_special_token). */
typedef enum cortiq_token_kind {
  CORTIQ_TOKEN_BOS = 0,         /* beginning of sequence (Gemma: <bos> = 2) */
  CORTIQ_TOKEN_EOS = 1,         /* end of sequence (Gemma: <eos> = 1) */
  CORTIQ_TOKEN_END_OF_TURN = 2, /* end of a chat turn (Gemma 4: <turn|> = 106) */
  CORTIQ_TOKEN_PAD = 3,         /* padding (Gemma: <pad> = 0) */
  CORTIQ_TOKEN_UNK = 4,         /* unknown (Gemma: <unk> = 3) */
  /* API 1.5. A chat reply's thought channel (Gemma 4 with enable_thinking; the chat template's
   * <|channel>thought\n ... <channel|>): the text between these two tokens, its first line the
   * channel's name, is the model's reasoning, which cortiq-server returns as reasoning_content
   * and the chat format drops from earlier model turns; the answer follows. */
  CORTIQ_TOKEN_CHANNEL_OPEN = 5,  /* <|channel> (Gemma 4: 100) */
  CORTIQ_TOKEN_CHANNEL_CLOSE = 6  /* <channel|> (Gemma 4: 101) */
} cortiq_token_kind;

/* One message of a conversation (cortiq_model_chat_format): NUL-terminated UTF-8. `role` is
 * "system", "user", "assistant" (rendered as the model's turn) or another role, rendered as
 * given. */
typedef struct cortiq_chat_message {
  const char* role;
  const char* content;
} cortiq_chat_message;

/* The ids of `text` (text_length bytes of UTF-8) into tokens[0 .. *n_tokens) (capacity
 * `capacity` ids; tokens = NULL: only *n_tokens is stored). Special-token strings written in the
 * text ("<start_of_turn>", "<|turn>") are matched as those tokens, as Hugging Face tokenizers
 * does. add_special != 0 applies the tokenizer's post-processor (Gemma: <bos> first) unless the
 * text already starts with the bos token's string (a rendered chat prompt), which would
 * otherwise be doubled — as apply_chat_template(tokenize=True) does. Errors: INVALID_ARGUMENT
 * (NULL model/n_tokens, NULL text with text_length > 0, text not valid UTF-8 (naming the byte),
 * capacity too small), FAILED_PRECONDITION (no tokenizer). */
CORTIQ_API cortiq_status cortiq_tokenize(const cortiq_model* model, const char* text,
                                         size_t text_length, int add_special, int32_t* tokens,
                                         size_t capacity, size_t* n_tokens);

/* The text of tokens[0 .. n_tokens) into text (capacity `capacity` bytes; NULL: only *length
 * is stored), as Hugging Face tokenizers' decode: byte-fallback tokens become their bytes (a
 * sequence that is not valid UTF-8 becomes U+FFFD per byte), special tokens are left out when
 * skip_special != 0. Errors: INVALID_ARGUMENT (NULL model/length, NULL tokens with n_tokens > 0,
 * a token id outside the tokenizer's vocabulary (naming its index), capacity < *length + 1),
 * FAILED_PRECONDITION (no tokenizer). */
CORTIQ_API cortiq_status cortiq_detokenize(const cortiq_model* model, const int32_t* tokens,
                                           size_t n_tokens, int skip_special, char* text,
                                           size_t capacity, size_t* length);

/* The string of one token as the vocabulary spells it, before decoding ("▁Hello", "<0x0A>",
 * "<bos>"; what `cortiq-tokenize --pieces` prints), into piece (capacity `capacity`; NULL: only
 * *length). For text use cortiq_detokenize or a cortiq_decoder. Errors: INVALID_ARGUMENT (NULL
 * model/length, token outside the vocabulary, capacity too small), FAILED_PRECONDITION. */
CORTIQ_API cortiq_status cortiq_token_piece(const cortiq_model* model, int32_t token,
                                            char* piece, size_t capacity, size_t* length);

/* Stores in *token the id of the model's special token of `kind` (a cortiq_token_kind value),
 * or -1 if the tokenizer has none. `kind` is an int32_t, not the enum type, so that any value a
 * caller passes is well defined to check (a C++ enum parameter holding a value outside the
 * enum's range is undefined behaviour). Errors: INVALID_ARGUMENT (NULL model/token, kind not a
 * cortiq_token_kind), FAILED_PRECONDITION (no tokenizer). */
CORTIQ_API cortiq_status cortiq_model_special_token(const cortiq_model* model, int32_t kind,
                                                    int32_t* token);

/* Stores in *result 1 if a plain completion (a prompt that is not a chat) stops at `token`, else
 * 0 — the ids `cortiq-run -p` stops on without --chat: the checkpoint's end-of-generation ids
 * (generation_config.json eos_token_id, which may be a list; without one, the tokenizer's eos
 * token). Gemma 4's own generation config lists <eos> 1 and <turn|> 106; a checkpoint listing
 * only <eos> stops a completion at <eos> only. A model without a tokenizer has none (always 0).
 * For a chat turn use cortiq_token_is_end_of_turn. Errors: INVALID_ARGUMENT (NULL
 * model/result, token outside [0, vocab_size)). */
CORTIQ_API cortiq_status cortiq_token_is_end_of_generation(const cortiq_model* model,
                                                           int32_t token, int* result);

/* Stores in *result 1 if the model's turn of a chat (a prompt from cortiq_model_chat_format with
 * add_generation_prompt) ends at `token`, else 0 — the ids cortiq-chat and `cortiq-run --chat`
 * stop on: every id of cortiq_token_is_end_of_generation and the chat format's end of turn
 * <turn|> (CORTIQ_TOKEN_END_OF_TURN) when the vocabulary has it, even if the generation config
 * does not list it. Errors: as cortiq_token_is_end_of_generation. */
CORTIQ_API cortiq_status cortiq_token_is_end_of_turn(const cortiq_model* model, int32_t token,
                                                     int* result);

/* Renders messages[0 .. n_messages) in the model's chat format — the Gemma 4 format, built in,
 * as the official chat_template.jinja renders it: <bos>, a system turn if a system message comes
 * first or enable_thinking != 0 (<|think|>), then <|turn>ROLE\n CONTENT <turn|>\n per message
 * (content trimmed; earlier model turns without their <|channel>…<channel|> thought parts) and,
 * with add_generation_prompt != 0, <|turn>model\n — into text (NULL: only *length). Tokenize
 * the result with add_special = 1 (its <bos> is not doubled). Errors: INVALID_ARGUMENT (NULL
 * model/length, NULL messages with n_messages > 0, no messages, a NULL role or content (naming
 * the message), a "tool" message (the built-in format renders no tool turns: the closest code,
 * since the request is one this model's format cannot take; the message names the message and
 * says "not supported"), capacity too small),
 * FAILED_PRECONDITION (no tokenizer). */
CORTIQ_API cortiq_status cortiq_model_chat_format(const cortiq_model* model,
                                                  const cortiq_chat_message* messages,
                                                  size_t n_messages, int add_generation_prompt,
                                                  int enable_thinking, char* text,
                                                  size_t capacity, size_t* length);

/* A stream decoder for generated ids: push each id and get the text that is final so far —
 * whole UTF-8 characters only (a character spelled by several byte-fallback tokens is held back
 * until complete); the concatenation of every push and the finish equals cortiq_detokenize of
 * all the ids. Stores a new decoder in *decoder (skip_special != 0: special tokens left out).
 * One thread at a time. Errors: INVALID_ARGUMENT (NULL model/decoder), FAILED_PRECONDITION (no
 * tokenizer), OUT_OF_MEMORY. */
CORTIQ_API cortiq_status cortiq_decoder_create(const cortiq_model* model, int skip_special,
                                               cortiq_decoder** decoder);

/* Adds `token`; stores in *text / *length the newly final text (often empty), NUL-terminated,
 * valid until the next call on the decoder. Errors (the decoder unchanged): INVALID_ARGUMENT
 * (NULL decoder/text/length, token outside the vocabulary). */
CORTIQ_API cortiq_status cortiq_decoder_push(cortiq_decoder* decoder, int32_t token,
                                             const char** text, size_t* length);

/* The rest of the text (held-back bytes, as U+FFFD if they never completed a character), as
 * cortiq_decoder_push returns it; the decoder then starts anew. Errors: INVALID_ARGUMENT (NULL
 * decoder/text/length). */
CORTIQ_API cortiq_status cortiq_decoder_finish(cortiq_decoder* decoder, const char** text,
                                               size_t* length);

/* Frees the decoder. NULL is ignored. */
CORTIQ_API void cortiq_decoder_free(cortiq_decoder* decoder);

/* ---- Sampling (API 1.3) ------------------------------------------------------------------
 * llama.cpp's default sampler chain: logit bias → repetition / frequency / presence penalties
 * over the last repeat_last_n accepted tokens → top_k → typical_p → top_p → min_p → temperature
 * → a seeded draw (greedy at temperature 0). The same options, seed, logits and accepted tokens
 * give the same tokens on every machine and for every thread count. */

/* Seed meaning "draw one at random" (cortiq_sampler_seed then tells it). */
#define CORTIQ_SEED_RANDOM UINT64_MAX

/* Options of cortiq_sampler_create; start from cortiq_sampler_default_options (the model's).
 * Versioned like cortiq_session_options (struct_size; fields a newer header adds must be 0). */
typedef struct cortiq_sampler_options {
  size_t struct_size;      /* bytes: sizeof(cortiq_sampler_options) as the caller compiled it */
  float temperature;       /* >= 0; 0 = greedy */
  int32_t top_k;           /* >= 0; 0 = off */
  float top_p;             /* (0, 1]; 1 = off */
  float min_p;             /* [0, 1]; 0 = off */
  float typical_p;         /* (0, 1]; 1 = off */
  float repeat_penalty;    /* > 0; 1 = off (transformers' repetition_penalty) */
  int32_t repeat_last_n;   /* penalty window: >= -1; 0 = off, -1 = every accepted token */
  float frequency_penalty; /* OpenAI frequency_penalty; 0 = off */
  float presence_penalty;  /* OpenAI presence_penalty; 0 = off */
  int32_t min_keep;        /* >= 0: top_p / min_p / typical_p keep at least this many */
  uint64_t seed;           /* CORTIQ_SEED_RANDOM = a random seed */
} cortiq_sampler_options;

/* The model's sampling defaults into *options (struct_size set): its generation config's
 * (Gemma 4: temperature 1, top_k 64, top_p 0.95), llama.cpp's for the rest (min_p 0.05,
 * repeat_last_n 64, penalties off), seed CORTIQ_SEED_RANDOM; llama.cpp's alone for a model
 * without a tokenizer. Errors: INVALID_ARGUMENT (NULL model/options). */
CORTIQ_API cortiq_status cortiq_sampler_default_options(const cortiq_model* model,
                                                        cortiq_sampler_options* options);

/* Creates a sampler for `model` (options NULL = cortiq_sampler_default_options) and stores it in
 * *sampler. Ids the tokenizer has no string for (rows of a padded LM head) are never sampled.
 * The sampler may outlive the model handle. Errors: INVALID_ARGUMENT (NULL model/sampler, a
 * struct_size or option out of range, naming it: "top_p must be in (0, 1], got 1.5"),
 * OUT_OF_MEMORY. */
CORTIQ_API cortiq_status cortiq_sampler_create(const cortiq_model* model,
                                               const cortiq_sampler_options* options,
                                               cortiq_sampler** sampler);

/* Samples the next token from `session`'s last logits (see cortiq_session_logits) into *token.
 * Does not accept it (call cortiq_sampler_accept, as llama.cpp's samplers do). Errors:
 * INVALID_ARGUMENT (NULL sampler/session/token, a session of another model's vocabulary size),
 * FAILED_PRECONDITION (the session has no logits; or every logit is -inf after the bias),
 * NUMERIC_ERROR (a logit is NaN or +inf), BUSY (the session or the sampler is in use). */
CORTIQ_API cortiq_status cortiq_sampler_sample(cortiq_sampler* sampler, cortiq_session* session,
                                               int32_t* token);

/* Adds `token` to the penalty history (accept the prompt's tokens too, so that repeats of the
 * prompt are penalized). Errors: INVALID_ARGUMENT (NULL sampler, token outside
 * [0, vocab_size)), BUSY. */
CORTIQ_API cortiq_status cortiq_sampler_accept(cortiq_sampler* sampler, int32_t token);

/* Forgets the history and restarts the generator from the seed: the sampler then draws what a
 * new one would. Errors: INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_sampler_reset(cortiq_sampler* sampler);

/* Stores in *seed the seed in use (the one drawn when the options said CORTIQ_SEED_RANDOM).
 * Errors: INVALID_ARGUMENT (NULL), BUSY. */
CORTIQ_API cortiq_status cortiq_sampler_seed(cortiq_sampler* sampler, uint64_t* seed);

/* Frees the sampler. NULL is ignored. */
CORTIQ_API void cortiq_sampler_free(cortiq_sampler* sampler);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CORTIQ_H_ */
