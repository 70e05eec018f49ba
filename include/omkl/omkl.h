/// @file omkl.h
/// @brief Umbrella header of the omkl library.
#pragma once

#include "omkl/algorithm.h"
#include "omkl/communicator.h"
#include "omkl/config.h"
#include "omkl/dataset.h"
#include "omkl/row_stream.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "omkl/learner.h"
#include "omkl/study.h"
#include "omkl/types.h"
