/* Compiles cortiq.h as strict C99 (-std=c99 -pedantic-errors -Werror, tests/capi/CMakeLists.txt)
 * and exercises a few calls from C; capi_test calls capi_header_c99_smoke. */
#include "runtime/cortiq.h"

#include <stddef.h>

/* Returns 0 if the C view of the API behaves: version, defaults, NULL handling. */
int capi_header_c99_smoke(void);

int capi_header_c99_smoke(void) {
  cortiq_session_options options = cortiq_session_options_default();
  cortiq_model* model = NULL;
  cortiq_model_info info;
  size_t length = 0;
  if (cortiq_api_version() != CORTIQ_API_VERSION) return 1;
  if (options.struct_size != sizeof(cortiq_session_options) || options.ctx_size != 0 ||
      options.threads != 0) {
    return 2;
  }
  if (cortiq_model_open(NULL, &model) != CORTIQ_STATUS_INVALID_ARGUMENT || model != NULL) {
    return 3;
  }
  info.struct_size = sizeof(info);
  if (cortiq_model_get_info(NULL, &info) != CORTIQ_STATUS_INVALID_ARGUMENT) return 4;
  if (cortiq_session_length(NULL, &length) != CORTIQ_STATUS_INVALID_ARGUMENT) return 5;
  if (cortiq_last_error()[0] == '\0') return 6;
  {
    cortiq_model_options model_options = cortiq_model_options_default();
    if (model_options.struct_size != sizeof(cortiq_model_options) ||
        model_options.load != CORTIQ_LOAD_READ_MATRICES || model_options.reserved != 0) {
      return 7;
    }
    if (cortiq_model_open_with_options(NULL, &model_options, &model) !=
            CORTIQ_STATUS_INVALID_ARGUMENT ||
        model != NULL) {
      return 8;
    }
  }
  cortiq_model_close(NULL);
  cortiq_session_free(NULL);
  return 0;
}
