// One include for Catch2 v2 (Debian's single header) and v3 (Ubuntu's package).
#pragma once

#if defined(KERNELSMITH_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
