#pragma once
// A run's result files (run.json and results.csv in the schema of result_schema.hpp), each
// written whole and atomically (atomic_file.hpp), written and read point by point: a document of
// tens of thousands of points (a plan's) is never held as one JSON tree, one text or a copy, so
// that writing or reading it leaves the heap as it found it. A simulation child forked later zeroes
// its actors' stacks wherever its parent's heap has room for them
// (docs/measurements/2026-12-06-plan-heap.md).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera {

// Points held elsewhere (a plan's outcomes), written without being copied.
using PointResultRefs = std::vector<std::reference_wrapper<const PointResult>>;
PointResultRefs point_result_refs(const std::vector<PointResult>& points);

// The run document's text as write_run_json writes it: byte for byte to_json(run).dump(2) with
// `points` as its points (the header's own points are ignored), and a final newline.
std::string run_json_text(const RunResult& header, const PointResultRefs& points);

void write_run_json(const std::string& path, const RunResult& run);
void write_run_json(const std::string& path, const RunResult& header,
                    const PointResultRefs& points);
void write_results_csv(const std::string& path, const std::vector<PointResult>& points);
void write_results_csv(const std::string& path, const PointResultRefs& points);

// The points of a run document's text, each handed to `each` as soon as it is read. Throws
// std::runtime_error naming `file_name` (and the point) on malformed input, possibly after some
// points were handed over.
void for_each_run_point(std::string_view text, const std::string& file_name,
                        const std::function<void(PointResult&&)>& each);
std::vector<PointResult> results_from_run_json(std::string_view text, const std::string& file_name);

}  // namespace tessera
