// Umbrella header: everything public in one include.
#pragma once

#include "kernelsmith/config.hpp"
#include "kernelsmith/version.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/dtype.hpp"
#include "kernelsmith/task.hpp"
#include "kernelsmith/candidate.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "kernelsmith/evaluation.hpp"
#include "kernelsmith/device.hpp"
#include "kernelsmith/backend.hpp"
#include "kernelsmith/evaluator.hpp"
#include "kernelsmith/mutator.hpp"
#include "kernelsmith/population.hpp"
#include "kernelsmith/archive.hpp"
