// The one exception type Tessera throws for invalid input and unusable configurations.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

/// Thrown before any task is submitted when an argument breaks a rule. The message names the
/// value, the rule and the fix, e.g. "tile extent 1 on axis x is thinner than ...".
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& what) : std::invalid_argument("tessera: " + what) {}
};

}  // namespace tessera
