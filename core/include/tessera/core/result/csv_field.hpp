#pragma once
// One field of a CSV record as RFC 4180 writes it: quoted when it holds a comma, a quote or a line
// break, with quotes doubled. Every CSV file the project writes uses it.
#include <string>

namespace tessera {

std::string csv_field(const std::string& text);
// A number as a CSV field: 9 significant digits, enough to read a float back exactly.
std::string csv_number(double value);

}  // namespace tessera
