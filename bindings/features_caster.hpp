// Features cross into Python as plain dicts {name: number or string}: a feature set is data a user builds and
// reads, and a dict keeps edits where they are made (a bound object's map would come back as a copy). Every
// binding file that converts Features includes this one caster.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "kernelsmith/features.hpp"

namespace pybind11::detail {

template <>
struct type_caster<kernelsmith::Features> {
  PYBIND11_TYPE_CASTER(kernelsmith::Features, const_name("dict[str, float | str]"));

  bool load(handle source, bool) {
    if (!isinstance<dict>(source)) return false;
    kernelsmith::Features features;
    for (auto entry : reinterpret_borrow<dict>(source)) {
      if (!isinstance<str>(entry.first)) return false;
      const std::string name = entry.first.cast<std::string>();
      if (isinstance<str>(entry.second)) {
        features.labels[name] = entry.second.cast<std::string>();
      } else if (isinstance<int_>(entry.second) || isinstance<float_>(entry.second)) {
        features.numbers[name] = entry.second.cast<double>();
      } else {
        throw type_error("feature '" + name + "' is a " +
                         std::string(pybind11::str(pybind11::type::handle_of(entry.second).attr("__name__"))) +
                         "; a feature is a number or a string");
      }
    }
    value = std::move(features);
    return true;
  }

  static handle cast(const kernelsmith::Features& features, return_value_policy, handle) {
    dict result;
    for (const auto& [name, number] : features.numbers) result[pybind11::str(name)] = pybind11::float_(number);
    for (const auto& [name, label] : features.labels) result[pybind11::str(name)] = pybind11::str(label);
    return result.release();
  }
};

}  // namespace pybind11::detail
