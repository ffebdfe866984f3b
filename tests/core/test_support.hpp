#pragma once
// Small helpers the core tests share.
#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "tessera/core/common/input_error.hpp"

namespace tessera::test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The InputError that `call` throws; any other outcome fails the current test.
template <typename Call>
InputError input_error(Call&& call) {
  try {
    call();
  } catch (const InputError& error) {
    return error;
  } catch (const std::exception& error) {
    ADD_FAILURE() << "expected an InputError, got: " << error.what();
    return InputError({}, "", "");
  }
  ADD_FAILURE() << "expected an InputError, but the input was accepted";
  return InputError({}, "", "");
}

}  // namespace tessera::test
