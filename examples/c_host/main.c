/* c_host: a plain C99 host of libcortiq. Opens a compiled model, evaluates a prompt in one batch
 * and prints the top-5 logits of the last token; optionally compares the logits after every
 * token with a reference file.
 *
 *   c_host MODEL.cortiq TOKENS [REF.f32]
 *
 * TOKENS is a comma-separated list ("2,80,78") or a file holding the ids (e.g. a JSON array,
 * tests/data/golden/<case>/tokens.json). REF.f32 is raw float32 [T, vocab_size], row t = the
 * logits after tokens 0..t (the golden logits_ref.f32); with it the exit status is 0 only if
 * max |logit - ref| <= 1e-3. Then, if the model carries a tokenizer, it prints the prompt as text
 * and a greedy continuation of 16 tokens streamed through the sampler and the stream decoder
 * (API 1.3). Exit status 1 on any error. */
#include <cortiq/cortiq.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reports a failed cortiq call and returns 1. */
static int fail(const char* what, cortiq_status status) {
  fprintf(stderr, "c_host: %s failed: %s: %s\n", what, cortiq_status_string(status),
          cortiq_last_error());
  return 1;
}

/* Reads a whole file into a NUL-terminated malloc'ed string (NULL if it cannot be read); the
 * byte count goes to *size if size is not NULL. */
static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* data = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = (char*)malloc((size_t)n + 1);
    if (data != NULL && fread(data, 1, (size_t)n, f) == (size_t)n) {
      data[n] = '\0';
      if (size != NULL) *size = (size_t)n;
    } else {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  return data;
}

/* Parses every run of decimal digits in `text` as a token id; returns the count (0 on error) and
 * a malloc'ed array in *tokens. */
static size_t parse_tokens(const char* text, int32_t** tokens) {
  size_t count = 0, capacity = 16;
  int32_t* ids = (int32_t*)malloc(capacity * sizeof(int32_t));
  const char* p = text;
  while (ids != NULL && *p != '\0') {
    if (*p >= '0' && *p <= '9') {
      char* end;
      long id = strtol(p, &end, 10);
      if (id > 2147483647L) id = 2147483647L; /* out of range: cortiq reports it */
      if (count == capacity) {
        int32_t* grown = (int32_t*)realloc(ids, 2 * capacity * sizeof(int32_t));
        if (grown == NULL) break;
        ids = grown;
        capacity *= 2;
      }
      ids[count++] = (int32_t)id;
      p = end;
    } else {
      ++p;
    }
  }
  *tokens = ids;
  return ids != NULL ? count : 0;
}

int main(int argc, char** argv) {
  cortiq_model* model = NULL;
  cortiq_session* session = NULL;
  cortiq_model_info info;
  cortiq_session_options options = cortiq_session_options_default();
  cortiq_status status;
  int32_t* tokens = NULL;
  size_t n_tokens, vocab, i, k;
  float* logits = NULL;
  char* token_text;
  int exit_code = 1;

  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s MODEL.cortiq TOKENS [REF.f32]\n", argv[0]);
    return 1;
  }
  if ((cortiq_api_version() >> 16) != CORTIQ_API_VERSION_MAJOR) {
    fprintf(stderr, "c_host: libcortiq API %u.%u, built for %d.%d\n", cortiq_api_version() >> 16,
            cortiq_api_version() & 0xffffu, CORTIQ_API_VERSION_MAJOR, CORTIQ_API_VERSION_MINOR);
    return 1;
  }
  token_text = read_file(argv[2], NULL);
  n_tokens = parse_tokens(token_text != NULL ? token_text : argv[2], &tokens);
  free(token_text);
  if (n_tokens == 0) {
    fprintf(stderr, "c_host: no token ids in '%s'\n", argv[2]);
    free(tokens);
    return 1;
  }

  status = cortiq_model_open(argv[1], &model);
  if (status != CORTIQ_STATUS_OK) {
    free(tokens);
    return fail("cortiq_model_open", status);
  }
  info.struct_size = sizeof(info);
  status = cortiq_model_get_info(model, &info);
  if (status != CORTIQ_STATUS_OK) {
    exit_code = fail("cortiq_model_get_info", status);
    goto done;
  }
  printf("model: vocab %lld, hidden %lld, %lld layers, context %lld, %llu bytes of weights\n",
         (long long)info.vocab_size, (long long)info.hidden_size, (long long)info.num_layers,
         (long long)info.max_context, (unsigned long long)info.weight_bytes);
  vocab = (size_t)info.vocab_size;

  options.ctx_size = n_tokens + 16; /* room for the continuation */
  status = cortiq_session_create(model, &options, &session);
  if (status != CORTIQ_STATUS_OK) {
    exit_code = fail("cortiq_session_create", status);
    goto done;
  }
  /* All rows, to compare every position with the reference. */
  logits = (float*)malloc(n_tokens * vocab * sizeof(float));
  if (logits == NULL) {
    fprintf(stderr, "c_host: out of memory\n");
    goto done;
  }
  status = cortiq_session_eval(session, tokens, n_tokens, logits, n_tokens * vocab);
  if (status != CORTIQ_STATUS_OK) {
    exit_code = fail("cortiq_session_eval", status);
    goto done;
  }

  /* Top 5 of the last token's logits (selection by repeated maximum). */
  {
    const float* last = logits + (n_tokens - 1) * vocab;
    size_t top[5];
    size_t n_top = vocab < 5 ? vocab : 5;
    printf("top-%zu after %zu tokens:", n_top, n_tokens);
    for (k = 0; k < n_top; ++k) {
      size_t best = vocab;
      for (i = 0; i < vocab; ++i) {
        size_t j;
        int taken = 0;
        for (j = 0; j < k; ++j) taken |= top[j] == i;
        if (!taken && (best == vocab || last[i] > last[best])) best = i;
      }
      top[k] = best;
      printf(" %zu (%.6f)", best, last[best]);
    }
    printf("\n");
  }
  exit_code = 0;

  if (argc == 4) {
    size_t ref_bytes = 0;
    float* ref = (float*)read_file(argv[3], &ref_bytes);
    double max_diff = 0.0;
    if (ref == NULL || ref_bytes != n_tokens * vocab * sizeof(float)) {
      fprintf(stderr, "c_host: %s: expected %zu bytes of float32 [%zu, %zu]\n", argv[3],
              n_tokens * vocab * sizeof(float), n_tokens, vocab);
      free(ref);
      exit_code = 1;
      goto done;
    }
    for (i = 0; i < n_tokens * vocab; ++i) {
      double d = fabs((double)logits[i] - (double)ref[i]);
      if (d != d || d > max_diff) max_diff = d; /* a NaN stays */
    }
    free(ref);
    printf("max |logit - ref| over %zu positions: %.3g (tolerance 1e-3)\n", n_tokens, max_diff);
    if (!(max_diff <= 1e-3)) exit_code = 1;
  }

  /* Text (API 1.3): the prompt, then 16 greedy tokens, stopping at an end-of-generation id. */
  {
    size_t length = 0;
    char* text;
    cortiq_sampler_options sampler_options;
    cortiq_sampler* sampler = NULL;
    cortiq_decoder* decoder = NULL;
    int step;
    status = cortiq_detokenize(model, tokens, n_tokens, 0, NULL, 0, &length);
    if (status == CORTIQ_STATUS_FAILED_PRECONDITION) {
      printf("(the model has no tokenizer: no text)\n");
      goto done;
    }
    if (status != CORTIQ_STATUS_OK) {
      exit_code = fail("cortiq_detokenize", status);
      goto done;
    }
    text = (char*)malloc(length + 1);
    if (text == NULL || cortiq_detokenize(model, tokens, n_tokens, 0, text, length + 1,
                                          &length) != CORTIQ_STATUS_OK) {
      free(text);
      exit_code = fail("cortiq_detokenize", CORTIQ_STATUS_OUT_OF_MEMORY);
      goto done;
    }
    printf("prompt: %s\ncontinuation: ", text);
    free(text);
    if ((status = cortiq_sampler_default_options(model, &sampler_options)) != CORTIQ_STATUS_OK ||
        (sampler_options.temperature = 0.0f,
         (status = cortiq_sampler_create(model, &sampler_options, &sampler)) != CORTIQ_STATUS_OK) ||
        (status = cortiq_decoder_create(model, 1, &decoder)) != CORTIQ_STATUS_OK) {
      exit_code = fail("creating the sampler and decoder", status);
      cortiq_sampler_free(sampler);
      goto done;
    }
    for (i = 0; i < n_tokens; ++i) cortiq_sampler_accept(sampler, tokens[i]);
    for (step = 0; step < 16; ++step) {
      int32_t next = 0;
      int end = 0;
      const char* piece;
      size_t piece_length;
      if ((status = cortiq_sampler_sample(sampler, session, &next)) != CORTIQ_STATUS_OK ||
          (status = cortiq_sampler_accept(sampler, next)) != CORTIQ_STATUS_OK ||
          (status = cortiq_token_is_end_of_generation(model, next, &end)) != CORTIQ_STATUS_OK) {
        exit_code = fail("sampling", status);
        break;
      }
      if (end) break;
      if ((status = cortiq_decoder_push(decoder, next, &piece, &piece_length)) != CORTIQ_STATUS_OK ||
          (status = cortiq_session_eval(session, &next, 1, NULL, 0)) != CORTIQ_STATUS_OK) {
        exit_code = fail("decoding", status);
        break;
      }
      fwrite(piece, 1, piece_length, stdout);
      fflush(stdout);
    }
    {
      const char* rest;
      size_t rest_length;
      if (cortiq_decoder_finish(decoder, &rest, &rest_length) == CORTIQ_STATUS_OK) {
        fwrite(rest, 1, rest_length, stdout);
      }
    }
    printf("\n");
    cortiq_decoder_free(decoder);
    cortiq_sampler_free(sampler);
  }

done:
  free(logits);
  free(tokens);
  cortiq_session_free(session);
  cortiq_model_close(model);
  return exit_code;
}
