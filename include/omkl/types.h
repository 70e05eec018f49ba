/// @file types.h
/// @brief Small enums shared across the public API.
#pragma once

#include <string>

namespace omkl {

/// The learning task of a stream.
enum class Task { Regression, Classification };

/// Behaviour profile of an algorithm (see README.md, "Profiles and reproduction").
/// Paper: the corrected equations of the papers (library default).
/// Reference: the conventions of the authors' released code, which reproduce the tables.
enum class Profile { Paper, Reference };

/// Which arithmetic backend runs the random-feature trajectories.
enum class BackendKind { Cpu, Cuda, Auto };

std::string to_string(Task task);
std::string to_string(Profile profile);
std::string to_string(BackendKind kind);
Task parse_task(const std::string& text);
Profile parse_profile(const std::string& text);
BackendKind parse_backend(const std::string& text);

}  // namespace omkl
