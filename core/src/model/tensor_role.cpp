#include "tessera/core/model/tensor_role.hpp"

namespace tessera {

std::string to_string(TensorSplit split) {
  switch (split) {
    case TensorSplit::replicated:
      return "replicated";
    case TensorSplit::follows:
      return "channel-wise";
    case TensorSplit::column:
      return "column";
    case TensorSplit::row:
      return "row";
    case TensorSplit::heads:
      return "heads";
    case TensorSplit::vocabulary:
      return "vocabulary";
  }
  return "?";
}

}  // namespace tessera
