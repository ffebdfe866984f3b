#pragma once
// Which node's host memory holds each sample a step reads from the data store (io.store: memory).
// LBANN's data store keeps each sample in the memory of one rank, the one that read it in the
// first epoch (its owner map stripes the first epoch's shuffled mini-batches over the ranks), and
// reshuffles the whole data set every epoch: a later step's samples are a random draw from it, so
// their holders are independent and uniform over the job's nodes. Some nodes then hold
// several of a step's samples and serve them all over one link, others none; the most loaded
// holder, not the mean traffic, decides when the last read arrives.
//
// A draw is a pure function of its numbers, so every process (each simulation runs in a child of
// its own) sees the same holders for the same draw, and two draws are two independent steps.
#include <cstdint>

namespace tessera {

// The node, in [0, nodes), holding sample `sample` of data-parallel replica `replica` in the step
// drawn as `draw`. A replica's samples are numbered over the step (a pipeline's micro-batches
// read one after the other), and replicas do not share samples.
std::int64_t sample_holder(std::uint64_t draw, std::int64_t replica, std::int64_t sample,
                           std::int64_t nodes);

}  // namespace tessera
