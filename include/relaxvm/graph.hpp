// SPDX-License-Identifier: Apache-2.0
// relaxvm's graph executor (optional, hosted only): the reference's graph JSON with its static
// storage plan, params files, several devices and per-node timing. Needs nlohmann/json (Debian:
// nlohmann-json3-dev). Include <relaxvm.hpp> first or not: this header includes what it needs.
#ifndef RELAXVM_GRAPH_HPP
#define RELAXVM_GRAPH_HPP

#include "relaxvm/base/config.hpp"
#if !RELAXVM_HOSTED || !RELAXVM_HEAP
#error "relaxvm/graph.hpp needs a hosted build with a heap (it parses JSON into std::vector and std::string)"
#endif

#include "relaxvm.hpp"
#include "relaxvm/graph/format.hpp"
#include "relaxvm/graph/params.hpp"
#include "relaxvm/graph/executor.hpp"

#endif  // RELAXVM_GRAPH_HPP
