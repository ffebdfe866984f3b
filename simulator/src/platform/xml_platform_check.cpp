#include "tessera/simulator/platform/xml_platform_check.hpp"

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string_view>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "process/child_process.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/plausible_figures.hpp"
#include "tessera/core/common/utf8_text.hpp"

// SimGrid's platform parser (flex) exports the line it is reading but declares it in no public
// header; it is the only way to place an abort or an exception thrown while parsing.
int surf_parse_get_lineno();

namespace tessera::sim {
namespace {

// SimGrid aborts (xbt_die) on some malformed files: the child's SIGABRT handler says on its
// (captured) standard error which line the parser had reached.
constexpr const char* kAbortLineMarker = "tessera-abort-line:";

void report_abort_line(int) {
  char text[64];
  const int length =
      std::snprintf(text, sizeof text, "\n%s%d\n", kAbortLineMarker, surf_parse_get_lineno());
  if (length > 0) {
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, text, static_cast<std::size_t>(length));
  }
  ::_exit(3);
}

int abort_line(const std::string& stderr_text) {
  const auto at = stderr_text.find(kAbortLineMarker);
  if (at == std::string::npos) return -1;
  return std::atoi(stderr_text.c_str() + at + std::strlen(kAbortLineMarker));
}

std::string format_number(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

nlohmann::json problem_with(const std::string& element, const std::string& id,
                            const std::string& problem) {
  return {{"element", element}, {"id", id}, {"problem", problem}};
}

std::string host_name(const std::string& pattern, std::int64_t rank) {
  std::string name = pattern;
  const auto placeholder = name.find("{i}");
  if (placeholder != std::string::npos) name.replace(placeholder, 3, std::to_string(rank));
  return name;
}

nlohmann::json route_problem(simgrid::s4u::Host* from, simgrid::s4u::Host* to) {
  const std::string between = "host '" + from->get_name() + "' to host '" + to->get_name() + "'";
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  try {
    from->route_to(to, links, &latency);
  } catch (const std::exception& error) {
    return problem_with("route", from->get_name(),
                        "no route from " + between + " (" + error.what() + ")");
  }
  if (!links.empty()) return nullptr;
  return problem_with("route", from->get_name(),
                      "no route from " + between +
                          " (without a link between them they would exchange data in no time)");
}

// Runs in the child: loads the file and checks what it declares. Returns null when all is well.
nlohmann::json inspect(const std::string& xml_path, const std::optional<XmlGpuMapping>& mapping) {
  std::vector<std::string> storage{"tessera", "--log=root.thres:critical",
                                   "--log=xbt_cfg.thres:critical"};
  std::vector<char*> argv;
  for (auto& text : storage) argv.push_back(text.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(storage.size());
  simgrid::s4u::Engine engine(&argc, argv.data());
  try {
    engine.load_platform(xml_path);
  } catch (const simgrid::ParseError& error) {
    return {{"parse_error", error.what()}};
  } catch (const std::exception& error) {
    return {{"problem", error.what()}, {"line", surf_parse_get_lineno()}};
  }
  for (auto* host : engine.get_all_hosts()) {
    const double speed = host->get_speed();
    if (!(speed > 0) || !std::isfinite(speed)) {
      return problem_with(
          "host", host->get_name(),
          "speed must be a positive, finite FLOP/s figure, got " + format_number(speed));
    }
  }
  for (auto* link : engine.get_all_links()) {
    const double bandwidth = link->get_bandwidth(), latency = link->get_latency();
    // A cluster file's ranges (plausible_figures.hpp): a link of 1e300 s or 1e-300 B/s played
    // steps of 1e300 s.
    const auto rates = plausible_range(QuantityKind::bandwidth_bytes_per_second);
    if (!(bandwidth > 0) || !std::isfinite(bandwidth) || !rates.holds(bandwidth)) {
      return problem_with("link", link->get_name(),
                          std::string("bandwidth must be a positive, finite byte rate ") +
                              rates.text + ", got " + format_number(bandwidth) + " B/s");
    }
    const auto delays = plausible_range(QuantityKind::seconds);
    if (!(latency >= 0) || !std::isfinite(latency) || !delays.holds(latency)) {
      return problem_with(
          "link", link->get_name(),
          std::string("latency must be a finite number of seconds, not negative, ") + delays.text +
              ", got " + format_number(latency) + " s");
    }
  }
  std::vector<simgrid::s4u::Host*> hosts;
  if (mapping) {
    for (std::int64_t rank = 0; rank < mapping->gpus; ++rank) {
      const auto name = host_name(mapping->host_pattern, rank);
      auto* host = simgrid::s4u::Host::by_name_or_null(name);
      if (!host) {
        return {{"key", "platform.simgrid_xml.gpu_hosts"},
                {"problem", "the file has no host '" + name + "' for GPU " + std::to_string(rank) +
                                " (the largest sweep point has " + std::to_string(mapping->gpus) +
                                " GPUs)"}};
      }
      hosts.push_back(host);
    }
  } else {
    hosts = engine.get_all_hosts();
  }
  if (hosts.empty()) return {{"element", "platform"}, {"problem", "the platform declares no host"}};
  for (std::size_t i = 1; i < hosts.size(); ++i) {
    for (auto problem :
         {route_problem(hosts.front(), hosts[i]), route_problem(hosts[i], hosts.front())}) {
      if (!problem.is_null()) return problem;
    }
  }
  return nullptr;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line declaring `id="name"` (a link's _UP/_DOWN halves are declared as the link).
int line_declaring(const std::vector<std::string>& lines, std::string name) {
  for (const char* suffix : {"_UP", "_DOWN"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string whole = name.substr(0, name.size() - s.size());
      if (line_declaring(lines, whole) > 0) return line_declaring(lines, whole);
    }
  }
  for (const char* quote : {"\"", "'"}) {
    const std::string needle = std::string("id=") + quote + name + quote;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(needle) != std::string::npos) return static_cast<int>(i) + 1;
    }
  }
  return 0;
}

// The first line opening `element`.
int line_opening(const std::vector<std::string>& lines, const std::string& element) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("<" + element) != std::string::npos) return static_cast<int>(i) + 1;
  }
  return 0;
}

// std::regex matches by recursion, a level per character matched: SimGrid's messages quote the
// file's text, and an attribute of tens of kilobytes overflowed the stack. Each message is cut
// before a regex sees it (the start says what is wrong).
constexpr std::size_t kLongestMessage = 2000;
std::string clipped(const std::string& text) {
  return text.size() <= kLongestMessage ? text : text.substr(0, kLongestMessage) + "...";
}

// The element opened on a line ("host", "link", ...), else "platform".
std::string element_on(const std::vector<std::string>& lines, int line) {
  if (line < 1 || line > static_cast<int>(lines.size())) return "platform";
  static const std::regex tag("<\\s*([A-Za-z_][A-Za-z0-9_]*)");
  std::smatch match;
  const auto text = clipped(lines[static_cast<std::size_t>(line - 1)]);
  if (std::regex_search(text, match, tag)) return match[1];
  return "platform";
}

// SimGrid's parse errors read "Parse error at FILE:LINE: [Invalid XML (XML input line N, state
// S): ]MESSAGE", some messages spread over lines between rows of asterisks.
std::pair<int, std::string> split_parse_error(const std::string& full_text) {
  const std::string what = clipped(full_text);
  static const std::regex located("^Parse error at .*:([0-9]+): ([\\s\\S]*)$");
  static const std::regex xml_state("^Invalid XML \\(XML input line [0-9]+, state [0-9]+\\): ");
  static const std::regex decoration("\\*+|BIG FAT WARNING|\\s+");
  std::smatch match;
  if (!std::regex_match(what, match, located)) return {0, what};
  std::string message = std::regex_replace(match[2].str(), xml_state, "");
  message = std::regex_replace(message, decoration, " ");
  message = message.substr(std::min(message.find_first_not_of(' '), message.size()));
  // The first sentence says it; the rest is SimGrid's advice on upgrading old files.
  const auto sentence = message.find(". ");
  if (sentence != std::string::npos) message.resize(sentence + 1);
  message = std::regex_replace(message, std::regex(" {2,}"), " ");
  while (!message.empty() && message.back() == ' ') message.pop_back();
  // SimGrid 3.32 says "does name" where it means the opposite.
  message = std::regex_replace(message, std::regex("does name a node\\."),
                               "names no host or router of this file.");
  return {std::stoi(match[1].str()), message};
}

// The text after SimGrid's first "[...CRITICAL] " mark, to the end of its line.
std::string first_critical_message(const std::string& stderr_text) {
  constexpr std::string_view mark = "/CRITICAL] ";
  const auto at = stderr_text.find(mark);
  if (at == std::string::npos) return "";
  const auto start = at + mark.size();
  const auto end = stderr_text.find('\n', start);
  return clipped(stderr_text.substr(start, end == std::string::npos ? end : end - start));
}

}  // namespace

void check_xml_platform(const std::string& xml_path, const std::optional<XmlGpuMapping>& mapping) {
  if (!std::ifstream(xml_path)) {
    throw InputError({xml_path, 0, 0}, "platform", "cannot be read (no such file, or no access)");
  }
  std::ostringstream text;
  text << std::ifstream(xml_path, std::ios::binary).rdbuf();
  require_utf8(text.str(), xml_path);
  const auto child = run_in_child(
      [&] {
        std::signal(SIGABRT, report_abort_line);
        return inspect(xml_path, mapping);
      },
      true);
  const auto lines = lines_of(text.str());
  auto fail = [&](int line, std::string element, const std::string& problem) {
    if (element.empty()) element = element_on(lines, line);
    throw InputError({xml_path, line, 0}, element, problem);
  };
  if (!child.message) {
    const auto said = first_critical_message(child.captured_stderr);
    const int line = abort_line(child.captured_stderr);
    fail(std::max(line, 0), "",
         "SimGrid aborted reading " + (line > 0 ? std::string("this element") : "the file") +
             (said.empty() ? " (signal " + std::to_string(child.signal) + ")" : ": " + said));
  }
  const auto& message = *child.message;
  if (message.is_null()) return;
  if (message.contains("error")) fail(0, "platform", message["error"].get<std::string>());
  if (message.contains("parse_error")) {
    const auto [line, problem] = split_parse_error(message["parse_error"].get<std::string>());
    fail(line, "", problem);
  }
  if (message.contains("key")) {
    fail(0, message["key"].get<std::string>(), message["problem"].get<std::string>());
  }
  const auto problem = message["problem"].get<std::string>();
  if (message.value("element", "") == "platform")
    fail(line_opening(lines, "platform"), "", problem);
  if (message.contains("id")) {
    const int line = line_declaring(lines, message["id"].get<std::string>());
    fail(line, message["element"].get<std::string>(), problem);
  }
  fail(message.value("line", 0), "", problem);
}

void check_scenario_platform(const LoadedScenario& loaded) {
  if (loaded.simgrid_xml_path.empty()) return;
  std::int64_t gpus = 0;
  for (const auto& point : loaded.points) gpus = std::max(gpus, point.config.gpus());
  check_xml_platform(loaded.simgrid_xml_path,
                     XmlGpuMapping{loaded.scenario.platform.simgrid_gpu_hosts, gpus});
}

}  // namespace tessera::sim
