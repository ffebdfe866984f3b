#include "scenario_enums.hpp"

namespace tessera {

template <>
const EnumTable<Optimizer>& enum_table() {
  static const EnumTable<Optimizer> table{
      {"sgd", Optimizer::sgd}, {"momentum", Optimizer::momentum}, {"adam", Optimizer::adam}};
  return table;
}

template <>
const EnumTable<MicroBatchPolicy>& enum_table() {
  static const EnumTable<MicroBatchPolicy> table{{"undivided", MicroBatchPolicy::undivided},
                                                 {"power_of_two", MicroBatchPolicy::power_of_two},
                                                 {"all", MicroBatchPolicy::all}};
  return table;
}

template <>
const EnumTable<MicroBatchMode>& enum_table() {
  static const EnumTable<MicroBatchMode> table{{"per_layer", MicroBatchMode::per_layer},
                                               {"whole_network", MicroBatchMode::whole_network}};
  return table;
}

template <>
const EnumTable<OffloadPolicy>& enum_table() {
  static const EnumTable<OffloadPolicy> table{{"none", OffloadPolicy::none},
                                              {"all", OffloadPolicy::all},
                                              {"conv", OffloadPolicy::conv},
                                              {"dyn", OffloadPolicy::dyn}};
  return table;
}

template <>
const EnumTable<PipelineSchedule>& enum_table() {
  static const EnumTable<PipelineSchedule> table{{"gpipe", PipelineSchedule::gpipe},
                                                 {"1f1b", PipelineSchedule::one_f_one_b}};
  return table;
}

template <>
const EnumTable<MemoryAllocation>& enum_table() {
  static const EnumTable<MemoryAllocation> table{{"layer_wise", MemoryAllocation::layer_wise},
                                                 {"network_wide", MemoryAllocation::network_wide}};
  return table;
}

template <>
const EnumTable<DatasetFormat>& enum_table() {
  static const EnumTable<DatasetFormat> table{{"synthetic", DatasetFormat::synthetic},
                                              {"hdf5", DatasetFormat::hdf5}};
  return table;
}

template <>
const EnumTable<DataStore>& enum_table() {
  static const EnumTable<DataStore> table{{"none", DataStore::none},
                                          {"memory", DataStore::memory},
                                          {"node_local", DataStore::node_local},
                                          {"page_cache", DataStore::page_cache}};
  return table;
}

template <>
const EnumTable<StoredDType>& enum_table() {
  static const EnumTable<StoredDType> table{{"float32", StoredDType::float32},
                                            {"int16", StoredDType::int16}};
  return table;
}

template <>
const EnumTable<BatchNormStatistics>& enum_table() {
  static const EnumTable<BatchNormStatistics> table{
      {"sample_group", BatchNormStatistics::sample_group}, {"global", BatchNormStatistics::global}};
  return table;
}

template <>
const EnumTable<DataSplit>& enum_table() {
  static const EnumTable<DataSplit> table{{"equal", DataSplit::equal},
                                          {"proportional", DataSplit::proportional}};
  return table;
}

template <>
const EnumTable<Scaling>& enum_table() {
  static const EnumTable<Scaling> table{{"strong", Scaling::strong}, {"weak", Scaling::weak}};
  return table;
}

template <>
const EnumTable<GrowAxis>& enum_table() {
  static const EnumTable<GrowAxis> table{{"data", GrowAxis::data},
                                         {"spatial_d", GrowAxis::spatial_d},
                                         {"spatial_h", GrowAxis::spatial_h},
                                         {"spatial_w", GrowAxis::spatial_w}};
  return table;
}

template <>
const EnumTable<CollectiveAlgorithm>& enum_table() {
  static const EnumTable<CollectiveAlgorithm> table{
      {"auto", CollectiveAlgorithm::automatic},
      {"ring", CollectiveAlgorithm::ring},
      {"tree", CollectiveAlgorithm::tree},
      {"hierarchical", CollectiveAlgorithm::hierarchical}};
  return table;
}

template <>
const EnumTable<ShardLevel>& enum_table() {
  static const EnumTable<ShardLevel> table{{"none", ShardLevel::none},
                                           {"optimizer", ShardLevel::optimizer},
                                           {"gradients", ShardLevel::gradients},
                                           {"weights", ShardLevel::weights}};
  return table;
}

template <>
const EnumTable<RecomputePolicy>& enum_table() {
  static const EnumTable<RecomputePolicy> table{{"none", RecomputePolicy::none},
                                                {"full", RecomputePolicy::full}};
  return table;
}

template <>
const EnumTable<TrainingTarget>& enum_table() {
  static const EnumTable<TrainingTarget> table{{"none", TrainingTarget::none},
                                               {"table", TrainingTarget::table},
                                               {"critical_batch", TrainingTarget::critical_batch}};
  return table;
}

std::string to_string(Optimizer value) {
  return enum_name(value);
}
std::string to_string(MicroBatchPolicy value) {
  return enum_name(value);
}
std::string to_string(MicroBatchMode value) {
  return enum_name(value);
}
std::string to_string(OffloadPolicy value) {
  return enum_name(value);
}
std::string to_string(MemoryAllocation value) {
  return enum_name(value);
}
std::string to_string(ShardLevel value) {
  return enum_name(value);
}
std::string to_string(RecomputePolicy value) {
  return enum_name(value);
}
std::string to_string(DatasetFormat value) {
  return enum_name(value);
}
std::string to_string(StoredDType value) {
  return enum_name(value);
}
std::int64_t stored_dtype_bytes(StoredDType dtype) {
  return dtype == StoredDType::int16 ? 2 : 4;
}
std::string to_string(DataStore value) {
  return enum_name(value);
}
std::string to_string(BatchNormStatistics value) {
  return enum_name(value);
}
std::string to_string(DataSplit value) {
  return enum_name(value);
}
std::string to_string(Scaling value) {
  return enum_name(value);
}
std::string to_string(GrowAxis value) {
  return enum_name(value);
}
std::string to_string(CollectiveAlgorithm value) {
  return enum_name(value);
}

std::string to_string(TrainingTarget value) {
  return enum_name(value);
}

std::string to_string(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b";
}

}  // namespace tessera
