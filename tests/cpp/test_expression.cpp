// The integer expression language of launch plans, task shapes and work models (lib/detail/expression.cpp,
// docs/candidate-format.md "Expressions"): C precedence, division that rounds toward minus infinity, and
// errors that name the problem and its column instead of wrapping around.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "catch.hpp"
#include "detail/expression.hpp"
#include "kernelsmith/launch_plan.hpp"
#include "test_support.hpp"

using namespace kernelsmith;
using test::contains;
using test::plan_error;

TEST_CASE("expressions: arithmetic, precedence and functions", "[expression]") {
  const Bindings sizes = {{"N", 1000}, {"M", 7}, {"BLOCK", 256}};
  CHECK(evaluate_expression("1 + 2 * 3", {}) == 7);
  CHECK(evaluate_expression("(1 + 2) * 3", {}) == 9);
  CHECK(evaluate_expression("-3 + 10", {}) == 7);
  CHECK(evaluate_expression("--3", {}) == 3);
  CHECK(evaluate_expression("ceil_div(N, BLOCK)", sizes) == 4);
  CHECK(evaluate_expression("ceil_div(1024, 256)", {}) == 4);
  CHECK(evaluate_expression("round_up(N, 64)", sizes) == 1024);
  CHECK(evaluate_expression("round_up(1024, 64)", {}) == 1024);
  CHECK(evaluate_expression("min(N, M) * max(2, 3)", sizes) == 21);
  CHECK(evaluate_expression("0x100 + 1", {}) == 257);
  CHECK(evaluate_expression("  N  ", sizes) == 1000);
  CHECK(evaluate_expression("ceil_div(N, BLOCK * 4) * (BLOCK * 4) >= N", sizes) == 1);
}

TEST_CASE("expressions: / and % round toward minus infinity", "[expression]") {
  CHECK(evaluate_expression("7 / 2", {}) == 3);
  CHECK(evaluate_expression("-7 / 2", {}) == -4);
  CHECK(evaluate_expression("7 / -2", {}) == -4);
  CHECK(evaluate_expression("-7 % 3", {}) == 2);
  CHECK(evaluate_expression("7 % -3", {}) == -2);
  CHECK(evaluate_expression("ceil_div(-7, 2)", {}) == -3);
}

TEST_CASE("expressions: comparisons and logic for @require", "[expression]") {
  CHECK(evaluate_expression("3 <= 4 && 4 < 5", {}) == 1);
  CHECK(evaluate_expression("3 == 4 || 2 != 2", {}) == 0);
  CHECK(evaluate_expression("!0 + !7", {}) == 1);
  // && short-circuits: the division is never evaluated.
  CHECK(evaluate_expression("K != 0 && N / K > 1", {{"K", 0}, {"N", 5}}) == 0);
}

TEST_CASE("expressions: errors name the problem and the column", "[expression]") {
  auto [unknown, unknown_line] = plan_error([] { evaluate_expression("ceil_div(N, BLOK)", {{"N", 1}, {"BLOCK", 2}}); });
  CHECK(contains(unknown, "unknown identifier \"BLOK\""));
  CHECK(contains(unknown, "column 13"));
  CHECK(contains(unknown, "BLOCK, N"));
  CHECK(unknown_line == 0);

  CHECK(contains(plan_error([] { evaluate_expression("N / (M - 7)", {{"N", 1}, {"M", 7}}); }).first, "division by zero"));
  CHECK(contains(plan_error([] { evaluate_expression("N % 0", {{"N", 1}}); }).first, "division by zero"));
  CHECK(contains(plan_error([] { evaluate_expression("ceil_div(4, 0)", {}); }).first, "division by zero"));
  CHECK(contains(plan_error([] { evaluate_expression("9223372036854775807 + 1", {}); }).first, "overflow"));
  CHECK(contains(plan_error([] { evaluate_expression("4294967296 * 4294967296", {}); }).first, "overflow"));
  CHECK(contains(plan_error([] { evaluate_expression("99999999999999999999", {}); }).first, "int64"));
  const auto syntax = plan_error([] { evaluate_expression("N +* 2", {{"N", 1}}); }).first;
  CHECK(contains(syntax, "syntax error at column 4"));
  CHECK(contains(plan_error([] { evaluate_expression("(1 + 2", {}); }).first, "expected \")\""));
  CHECK(contains(plan_error([] { evaluate_expression("", {}); }).first, "empty"));
  CHECK(contains(plan_error([] { evaluate_expression("256u", {}); }).first, "not an integer"));
  CHECK(contains(plan_error([] { evaluate_expression("1.5 * N", {{"N", 2}}); }).first, "column"));
  CHECK(contains(plan_error([] { evaluate_expression("sizeof(float)", {}); }).first, "unknown function \"sizeof\""));
  CHECK(contains(plan_error([] { evaluate_expression("min(1, 2, 3)", {}); }).first, "takes 2 arguments"));
  CHECK(contains(plan_error([] { evaluate_expression("1 2", {}); }).first, "column 3"));
}

TEST_CASE("expressions: precedence and associativity follow C", "[expression]") {
  CHECK(evaluate_expression("2 + 3 * 4 - 1", {}) == 13);
  CHECK(evaluate_expression("10 - 4 - 3", {}) == 3);    // left to right, not 10 - (4 - 3)
  CHECK(evaluate_expression("64 / 4 / 2", {}) == 8);
  CHECK(evaluate_expression("2 * 3 % 4", {}) == 2);     // * and % share a level: (2 * 3) % 4
  CHECK(evaluate_expression("-2 * 3", {}) == -6);       // unary minus binds tighter than *
  CHECK(evaluate_expression("-(2 + 3) * 2", {}) == -10);
  CHECK(evaluate_expression("1 + 1 == 2", {}) == 1);    // arithmetic before comparison
  CHECK(evaluate_expression("1 < 2 == 1", {}) == 1);    // relational before equality
  CHECK(evaluate_expression("1 || 0 && 0", {}) == 1);   // && before ||
  CHECK(evaluate_expression("(1 || 0) && 0", {}) == 0);
  CHECK(evaluate_expression("!1 == 0", {}) == 1);       // ! applies to the operand only
  CHECK(evaluate_expression("max(1, 2) * min(3, 4) + ceil_div(5, 2)", {}) == 9);
}

TEST_CASE("expressions: floor division and modulo of negatives, ceil_div and round_up", "[expression]") {
  CHECK(evaluate_expression("-7 / -2", {}) == 3);
  CHECK(evaluate_expression("-8 / 2", {}) == -4);  // exact quotients are not moved
  CHECK(evaluate_expression("-1 / 3", {}) == -1);
  CHECK(evaluate_expression("-1 % 3", {}) == 2);   // a % b has the sign of b, and a == (a / b) * b + a % b
  CHECK(evaluate_expression("-7 % -3", {}) == -1);
  CHECK(evaluate_expression("-9223372036854775807 - 1 % -1", {}) == -9223372036854775807);
  CHECK(evaluate_expression("(-9223372036854775807 - 1) % -1", {}) == 0);
  CHECK(evaluate_expression("ceil_div(7, 2)", {}) == 4);
  CHECK(evaluate_expression("ceil_div(8, 2)", {}) == 4);
  CHECK(evaluate_expression("ceil_div(7, -2)", {}) == -3);
  CHECK(evaluate_expression("ceil_div(-7, -2)", {}) == 4);
  CHECK(evaluate_expression("round_up(1, 128)", {}) == 128);
  CHECK(evaluate_expression("round_up(0, 128)", {}) == 0);
  CHECK(evaluate_expression("round_up(-7, 4)", {}) == -4);
  CHECK(evaluate_expression("min(-3, 2)", {}) == -3);
  CHECK(evaluate_expression("max(-3, -2)", {}) == -2);
}

TEST_CASE("expressions: every overflow and division by zero is an error naming its column", "[expression]") {
  const auto error = [](const std::string& expression, const Bindings& bindings = {}) {
    return plan_error([&] { evaluate_expression(expression, bindings); }).first;
  };
  CHECK(contains(error("N * N", {{"N", std::int64_t(1) << 32}}), "int64 overflow in 4294967296 * 4294967296 at column 3"));
  CHECK(contains(error("-9223372036854775807 - 2"), "int64 overflow in -9223372036854775807 - 2 at column 22"));
  CHECK(contains(error("1 - (-9223372036854775807 - 1)"), "int64 overflow"));
  CHECK(contains(error("-N", {{"N", std::numeric_limits<std::int64_t>::min()}}),
                 "int64 overflow in the negation at column 1"));
  CHECK(contains(error("N / -1", {{"N", std::numeric_limits<std::int64_t>::min()}}), "int64 overflow"));
  CHECK(contains(error("ceil_div(N, -1)", {{"N", std::numeric_limits<std::int64_t>::min()}}),
                 "int64 overflow in ceil_div(-9223372036854775808, -1) at column 1"));
  CHECK(contains(error("round_up(9223372036854775807, 2)"), "int64 overflow in round_up"));
  CHECK(contains(error("1 + N / 0", {{"N", 5}}), "division by zero in 5 / 0 at column 7"));
  CHECK(contains(error("N % (N - N)", {{"N", 5}}), "division by zero in 5 % 0 at column 3"));
  CHECK(contains(error("2 * round_up(N, 0)", {{"N", 5}}), "division by zero in round_up(5, 0) at column 5"));
  // The message quotes the expression, so that a task or plan line can be found from it.
  CHECK(contains(error("1 + N / 0", {{"N", 5}}), "expression \"1 + N / 0\""));
  // The column is that of the operator, also deep inside: no rounding to a wrong launch size.
  CHECK(contains(error("ceil_div(N, 256) * (N - N / 0)", {{"N", 5}}), "at column 27"));
}

TEST_CASE("expressions: unknown identifiers list the known ones", "[expression]") {
  const auto [message, line] = plan_error([] { evaluate_expression("M * K + Q", {{"M", 1}, {"K", 2}}); });
  CHECK(contains(message, "unknown identifier \"Q\" at column 9; known identifiers: K, M"));
  CHECK(line == 0);
  CHECK(contains(plan_error([] { evaluate_expression("N", {}); }).first, "known identifiers: (none)"));
  // An unknown identifier behind a short-circuit is never looked up.
  CHECK(evaluate_expression("0 && UNKNOWN", {}) == 0);
  CHECK(evaluate_expression("1 || UNKNOWN", {}) == 1);
}

TEST_CASE("a parsed expression evaluates at many bindings and lists its identifiers", "[expression]") {
  const detail::Expression grid("ceil_div(N, BLOCK) * BLOCK + max(N, WARP_SIZE) - N");
  CHECK(grid.text() == "ceil_div(N, BLOCK) * BLOCK + max(N, WARP_SIZE) - N");
  CHECK(grid.identifiers() == std::vector<std::string>{"N", "BLOCK", "WARP_SIZE"});  // once each, in order
  CHECK(grid.evaluate({{"N", 1000}, {"BLOCK", 256}, {"WARP_SIZE", 32}}) == 1024);
  CHECK(grid.evaluate({{"N", 1}, {"BLOCK", 128}, {"WARP_SIZE", 32}}) == 159);
  CHECK(detail::Expression("ceil_div(4, 2)").identifiers().empty());  // function names are not identifiers

  // Syntax errors surface when parsing, before any binding is known.
  CHECK(contains(plan_error([] { detail::Expression("N + (M"); }).first, "expected \")\" to close the parenthesis"));
  CHECK(contains(plan_error([] { detail::Expression("N # 2"); }).first, "unexpected character '#'"));
  CHECK(contains(plan_error([] { detail::Expression("0x"); }).first, "hexadecimal number without digits at column 1"));

  CHECK(detail::is_identifier("_tile_M2"));
  CHECK_FALSE(detail::is_identifier("2M"));
  CHECK_FALSE(detail::is_identifier("a-b"));
  CHECK_FALSE(detail::is_identifier(""));
}
