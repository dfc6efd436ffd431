// The built-in simulations' declarations as JSON (an array of {name, help, fields, params,
// presets}), made at build time by cuview-sims-manifest (compute/tools/sims_manifest.cpp).
#pragma once

namespace cuview::ctl {
extern const char* const kBuiltinSimulationsJson;
}  // namespace cuview::ctl
