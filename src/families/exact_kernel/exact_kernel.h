/// @file exact_kernel.h
/// @brief The exact-kernel family: baselines of spec/raker.md §5 — single-kernel KOGD (RBF,
/// POLY, LINEAR), AvgMKL, OMKL, OMKL-B and M-Forgetron — and the baselines of the graph-aided
/// journal tables as its reference code defines them (spec/graph-aided.md §4.1–4.3): OMKR,
/// RBF-1, POLY-2 and the random-feature RFOMKR.
///
/// All the kernelized ones keep f(x) = Σ_{τ∈S} α_τ κ(x, x_τ) over a support set S of past
/// samples (support_set.h); one step evaluates κ(x_t, ·) against the whole set with one GEMV
/// plus element-wise maps, shared by every kernel of a dictionary, so a step costs
/// O(|S| d + |S| P). They draw no random numbers, so every replicate of a run is the same
/// trajectory: the algorithms compute it once and copy the prediction to all n_replicates()
/// outputs.
///
/// The folder: support_set.h (stored samples, kernel rows), kogd.h (the KOGD learners and
/// their ensembles), forgetron.h (M-Forgetron), rfomkr.h (RFOMKR), exact_kernel.cpp
/// (parameters and the registry entries of add_exact_kernel_algorithms()).
#pragma once

#include "families/exact_kernel/forgetron.h"
#include "families/exact_kernel/kogd.h"
#include "families/exact_kernel/rfomkr.h"
#include "families/exact_kernel/support_set.h"
