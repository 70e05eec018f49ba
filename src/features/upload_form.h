/// @file upload_form.h
/// @brief What a federated client sends for each kernel it updates (spec/federated.md §1.3 S7,
/// §7 C1, §4.9 `message.upload`), and the term the server's sum then adds for it.
///
/// Delta (the authors' code; the reference profile's default): the step g = θ_{i,t} − θ_{ik,t+1}
/// itself. Theta (the paper's text; the paper profile's default): the client's
/// θ_{ik,t+1} = θ_{i,t} − g, from which the server takes θ_{i,t} − θ_{ik,t+1} before its sum. The two are equal in exact arithmetic; in floating point
/// the Theta term is θ − (θ − g), rounded twice, so the two forms' θ differ in the last bits
/// (and, where θ is much larger than a step, by the rounding of θ − g). Every path that forms the
/// server's sum (the backends' aggregate_round(), the resident walk) adds server_term(), and a
/// client and server in separate processes its two halves, so that one form gives the same
/// numbers on all of them.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace omkl::detail {

enum class UploadForm : std::uint8_t { Delta, Theta };

/// What a client sends for a θ entry `theta` of the round and its step g on it.
template <typename Real>
OMKL_HD Real uploaded_value(Real theta, Real g, UploadForm form) {
  return form == UploadForm::Theta ? theta - g : g;  // θ_{ik,t+1}, or the step
}

/// The step the server takes from a client's uploaded value of the entry `theta`.
template <typename Real>
OMKL_HD Real received_step(Real theta, Real value, UploadForm form) {
  return form == UploadForm::Theta ? theta - value : value;
}

/// The term the server's sum adds for one client's step g on `theta`, the value having gone up and
/// come back: what a server in another process adds for the value a client process sends.
template <typename Real>
OMKL_HD Real server_term(Real theta, Real g, UploadForm form) {
  return received_step(theta, uploaded_value(theta, g, form), form);
}

}  // namespace omkl::detail
