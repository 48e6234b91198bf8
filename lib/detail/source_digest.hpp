// One pass over a source for what the search keeps of it: the normalised hash and the token count
// (the archive's complexity descriptor), so that a program is tokenised once, not once per use.
#pragma once

#include <cstddef>
#include <string>

namespace kernelsmith::detail {

struct SourceDigest {
  std::string hash;        ///< normalized_source_hash(language, source)
  std::size_t tokens = 0;  ///< source_tokens(source).size()
};

SourceDigest digest_source(const std::string& language, const std::string& source);

}  // namespace kernelsmith::detail
