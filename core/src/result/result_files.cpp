#include "tessera/core/result/result_files.hpp"

#include <stdexcept>
#include <utility>

#include "tessera/core/common/atomic_file.hpp"

namespace tessera {
namespace {

// nlohmann's dump(2) of the document puts each point two levels in: its own dump(2), every line
// moved four spaces right.
void write_nested_point(const PointResult& point, const TextSink& write) {
  const auto own = to_json(point).dump(2);
  write("    ");
  std::size_t line_start = 0;
  for (std::size_t newline = own.find('\n'); newline != std::string::npos;
       newline = own.find('\n', line_start)) {
    write(std::string_view(own).substr(line_start, newline + 1 - line_start));
    write("    ");
    line_start = newline + 1;
  }
  write(std::string_view(own).substr(line_start));
}

void write_run_document(const RunResult& header, const PointResultRefs& points,
                        const TextSink& write) {
  auto empty = run_header_json(header);
  empty["points"] = nlohmann::json::array();
  const auto document = empty.dump(2);
  // The top-level key is the only line at two spaces' indent that names it: deeper keys are
  // indented further, and a string's own newlines are escaped.
  const std::string key = "\n  \"points\": []";
  const auto at = document.find(key);
  if (at == std::string::npos) throw std::logic_error("run document without its points key");
  const auto array_at = at + key.size() - 2;
  write(std::string_view(document).substr(0, array_at));
  if (points.empty()) {
    write("[]");
  } else {
    write("[\n");
    for (std::size_t i = 0; i < points.size(); ++i) {
      write_nested_point(points[i].get(), write);
      write(i + 1 < points.size() ? ",\n" : "\n");
    }
    write("  ]");
  }
  write(std::string_view(document).substr(array_at + 2));
  write("\n");
}

}  // namespace

PointResultRefs point_result_refs(const std::vector<PointResult>& points) {
  return PointResultRefs(points.begin(), points.end());
}

std::string run_json_text(const RunResult& header, const PointResultRefs& points) {
  std::string text;
  write_run_document(header, points, [&](std::string_view piece) { text += piece; });
  return text;
}

void write_run_json(const std::string& path, const RunResult& run) {
  write_run_json(path, run, point_result_refs(run.points));
}

void write_run_json(const std::string& path, const RunResult& header,
                    const PointResultRefs& points) {
  write_file_atomically(path,
                        [&](const TextSink& write) { write_run_document(header, points, write); });
}

void write_results_csv(const std::string& path, const std::vector<PointResult>& points) {
  write_results_csv(path, point_result_refs(points));
}

void write_results_csv(const std::string& path, const PointResultRefs& points) {
  write_file_atomically(path, [&](const TextSink& write) {
    write(results_csv_header_line());
    for (const PointResult& point : points) write(results_csv_line(point));
  });
}

void for_each_run_point(std::string_view text, const std::string& file_name,
                        const std::function<void(PointResult&&)>& each) {
  using Event = nlohmann::json::parse_event_t;
  std::string top_level_key;
  std::size_t index = 0;
  // Each element of "points" is converted once parsed and left out of the document, which keeps
  // only the header.
  const auto header = nlohmann::json::parse(
      text,
      [&](int depth, Event event, nlohmann::json& parsed) {
        if (depth == 1 && event == Event::key) top_level_key = parsed.get<std::string>();
        const bool point_read =
            depth == 2 && top_level_key == "points" &&
            (event == Event::object_end || event == Event::array_end || event == Event::value);
        if (!point_read) return true;
        PointResult point;
        try {
          point = point_result_from_json(parsed);
        } catch (const std::invalid_argument& error) {
          throw std::runtime_error(file_name + ": points[" + std::to_string(index) +
                                   "]: " + error.what());
        }
        // Outside the try: what `each` throws is its own, not a malformed point's.
        each(std::move(point));
        ++index;
        return false;
      },
      /*allow_exceptions=*/false);
  if (!header.is_object() || header.value("schema", std::string()) != "tessera-run/1" ||
      !header.contains("points") || !header["points"].is_array()) {
    throw std::runtime_error(file_name + ": not a Tessera run document (schema tessera-run/1)");
  }
}

std::vector<PointResult> results_from_run_json(std::string_view text,
                                               const std::string& file_name) {
  std::vector<PointResult> points;
  for_each_run_point(text, file_name,
                     [&](PointResult&& point) { points.push_back(std::move(point)); });
  return points;
}

}  // namespace tessera
