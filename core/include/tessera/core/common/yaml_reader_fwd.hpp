#pragma once
// The strict YAML reader's types, declared only: for headers whose functions take them by
// reference, so that the files including those headers do not compile yaml-cpp's (yaml_reader.hpp
// defines them).

namespace tessera {

class YamlValue;
class YamlMap;

}  // namespace tessera
