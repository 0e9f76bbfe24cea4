// Status plumbing shared by the loader, compiler and runtime: early-return macros over
// absl::Status / absl::StatusOr (Abseil 20220623 ships none publicly).
#ifndef CORTIQ_BASE_STATUS_MACROS_H_
#define CORTIQ_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` from the enclosing function if it is not OK.
#define CORTIQ_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::absl::Status cortiq_status_ = (expr);           \
    if (!cortiq_status_.ok()) return cortiq_status_;  \
  } while (0)

#define CORTIQ_STATUS_CONCAT_INNER_(a, b) a##b
#define CORTIQ_STATUS_CONCAT_(a, b) CORTIQ_STATUS_CONCAT_INNER_(a, b)

// `CORTIQ_ASSIGN_OR_RETURN(auto x, MakeX());` declares/assigns `x` from an absl::StatusOr, or
// returns its status from the enclosing function.
#define CORTIQ_ASSIGN_OR_RETURN(lhs, expr) \
  CORTIQ_ASSIGN_OR_RETURN_IMPL_(CORTIQ_STATUS_CONCAT_(cortiq_statusor_, __LINE__), lhs, expr)
#define CORTIQ_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (!statusor.ok()) return statusor.status();            \
  lhs = std::move(statusor).value()

#endif  // CORTIQ_BASE_STATUS_MACROS_H_
