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

TEST_CASE("a reference's log names the reference's file, whatever the compiler called it", "[build_failure]") {
  using kernelsmith::detail::rename_source_in_log;
  CHECK(rename_source_in_log("candidate.cu(12): error: identifier \"tile\" is undefined\n1 error in candidate.cu.\n",
                             "tasks/mm/reference.cu") ==
        "tasks/mm/reference.cu(12): error: identifier \"tile\" is undefined\n1 error in candidate.cu.\n");
  CHECK(rename_source_in_log("error: candidate.cl:4:37: expected expression\ncandidate.cl:9:1: note: here\n",
                             "reference") ==
        "error: reference:4:37: expected expression\nreference:9:1: note: here\n");
}
