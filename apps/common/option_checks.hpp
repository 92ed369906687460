// The applications' option checks: CLI11 validators whose messages say the rule and the fix
// as a person would write them (CLI11's own print their limits as doubles and accept nan).
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <limits>
#include <regex>
#include <string>

namespace apps {

// Reads a whole number as typed, in decimal; returns why it is not one, or "" when it is.
// CLI11's own conversion (strtoll) takes 99999999999999999999 as 9223372036854775807 without a
// word, and reads 010 as 8; a run would then go on with a count the user never gave.
inline std::string whole_number(const std::string& text, long& v) {
  const char* end = text.data() + text.size();
  const char* first = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [at, error] = std::from_chars(first, end, v);
  if (error == std::errc::result_out_of_range)
    return text + " is out of range; give a whole number between " +
           std::to_string(std::numeric_limits<long>::min()) + " and " +
           std::to_string(std::numeric_limits<long>::max());
  if (error != std::errc() || at != end) return "'" + text + "' is not a whole number";
  return {};
}

// A CLI11 check that a path option names something: "" is no directory or file the user named
// (--checkpoint-dir "" wrote /step-00000002 at the root, --restart "" and --mesh "" ran from
// the start or on the generated mesh without a word). `example` is a name that would do.
inline CLI::Validator named(const std::string& what, const std::string& example) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        if (!text.empty()) return {};
        return "an empty " + what + " was given; name one (e.g. " + example + ") or drop the flag";
      },
      "");
}

// A CLI11 check that the text is a whole number that a long holds (--size, --tile).
inline CLI::Validator whole() {
  return CLI::Validator(
      [](std::string& text) {
        long v = 0;
        return whole_number(text, v);
      },
      "");  // --help already says INT
}

// A CLI11 check that a whole number is at least `low`, with a message that says so (CLI11's
// PositiveNumber prints its range as doubles: "not in range 2.22507e-308 to ..."), and that the
// option's variable, of type T, holds it (CLI11 said "Could not convert: --iterations =
// 99999999999" for an int).
template <class T = long>
CLI::Validator at_least(long low) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        long v = 0;
        if (std::string why = whole_number(text, v); !why.empty()) return why;
        if (v < low)
          return text + " is below " + std::to_string(low) + "; give at least " +
                 std::to_string(low);
        const long high = static_cast<long>(std::numeric_limits<T>::max());
        if (v > high)
          return text + " is above " + std::to_string(high) +
                 ", the most this option holds; give a value from " + std::to_string(low) + " to " +
                 std::to_string(high);
        return {};
      },
      ">=" + std::to_string(low));
}

// CLI11's wording of an option given the wrong number of values ("--steps: At Most 1
// required but received 2", for an option given twice; "--size: At least 3 required but
// received 2"), said plainly; every other failure as CLI11 says it.
inline std::string plain_failure(const CLI::App* app, const CLI::Error& e) {
  static const std::regex miscounted(
      "^(.*): (At Most |At least |)([0-9]+) required but received ([0-9]+)$");
  std::smatch m;
  const std::string what = e.what();
  if (!std::regex_match(what, m, miscounted)) return CLI::FailureMessage::simple(app, e);
  // "At least N" comes from an option of exactly N values (--size): said as "takes N".
  const std::string takes = m[2] == "At Most " ? "at most " : "";
  const std::string values = m[3] == "1" ? " value" : " values";
  return m[1].str() + " takes " + takes + m[3].str() + values + " and was given " + m[4].str() +
         (m[3] == "1" && m[2] == "At Most "
              ? " (given more than once?); give it once, with one value"
              : "; give " + m[3].str() + values) +
         "\nRun with --help for more information.\n";
}

// A CLI11 check that a whole number is between `low` and `high` (both included), saying so.
inline CLI::Validator whole_in(long low, long high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        long v = 0;
        if (std::string why = whole_number(text, v); !why.empty()) return why;
        if (v < low || v > high)
          return text + " is not between " + std::to_string(low) + " and " + std::to_string(high) +
                 "; give a value in that range";
        return {};
      },
      std::to_string(low) + ".." + std::to_string(high));
}

// A CLI11 check that a real number is finite and in a range, with the range in the message:
// CLI11's own checks let nan and inf through (and a run on nan ends with checksum=nan and exit
// status 0). `range` says the range as a person would, e.g. "above 0 and at most 1"; the
// number must be >= low (> low when `above_low`) and <= high.
inline CLI::Validator finite_in(double low, double high, const std::string& range,
                                bool above_low = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v))
          return "'" + text + "' is not a finite number; give one " + range;
        if (v < low || (above_low && v == low) || v > high)
          return text + " is out of range; give a number " + range;
        return {};
      },
      range);
}

}  // namespace apps
