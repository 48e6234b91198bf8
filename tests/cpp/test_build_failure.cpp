#include "catch.hpp"
#include "evaluate/build_failure.hpp"

using kernelsmith::detail::headline_of_log;

TEST_CASE("A compiler log's headline is its first error line", "[build_failure]") {
  // ptxas prints informational lines before the error that matters.
  const std::string ptxas =
      "ptxas info    : 1 bytes gmem\n"
      "ptxas info    : Compiling entry function 'scan' for 'sm_90a'\n"
      "ptxas error   : Entry function 'scan' uses too much data for the launch bounds\n";
  CHECK(headline_of_log(ptxas) == "ptxas error   : Entry function 'scan' uses too much data for the launch bounds");
  CHECK(headline_of_log("\n\nkernel.cu(3): warning: unused\nmore\n") == "kernel.cu(3): warning: unused");
  CHECK(headline_of_log("") == "");
  CHECK(headline_of_log("  \n\t\n").empty());
}
