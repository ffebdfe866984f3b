#pragma once
// Aligned plain-text tables for terminal reports.
#include <string>
#include <vector>

namespace tessera {

class TextTable {
 public:
  enum class Align { left, right };

  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace tessera
