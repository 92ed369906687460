#include "partition/gpu_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tessera::partition {

namespace {
// The least of a figure over `gpus`, 0 where some GPU's is unknown (or there is none).
double least_known(const std::vector<Gpu>& gpus, double Gpu::*figure) {
  double least = 0;
  for (const Gpu& g : gpus) {
    if (!(g.*figure > 0)) return 0;
    least = least > 0 ? std::min(least, g.*figure) : g.*figure;
  }
  return least;
}
}  // namespace

double Machine::gpu_memory_bytes() const { return least_known(gpus, &Gpu::memory_bytes); }

double Machine::gpu_bus_bytes_per_second() const {
  return least_known(gpus, &Gpu::bus_bytes_per_second);
}

double Machine::gpu_peer_bytes_per_second() const {
  return least_known(gpus, &Gpu::peer_bytes_per_second);
}

double gpu_exchange_seconds(double plane_points, const Machine& m) {
  if (m.cuda_workers < 2) return 0;
  const double bus = m.gpu_bus_bytes_per_second();
  double link = m.gpu_peer_bytes_per_second();
  // A link faster than the bus is direct (NVLink): each face crosses it once, and a GPU's two
  // (a neighbour each side) go out and come in at once. Else the faces go through main memory
  // (PCIe): each twice in turn, GPU to host then host to GPU, as many on a GPU's bus as it has
  // neighbours (simulated on 4 PCIe GPUs: heat3d 256^3 81 us a step against 60 priced with
  // two faces, 2048x2048x64 in y slabs 0.480 ms against 0.448).
  const bool direct = link > 0 && bus > 0 && link > bus;
  if (!(link > 0)) link = bus;
  if (!(link > 0)) link = kAssumedBusBytesPerSecond;
  const int faces = direct ? 2 : 2 * std::min(2, m.cuda_workers - 1);
  return faces * plane_points * m.point.field / link;
}

namespace {
// A resident part on several GPUs: its step with the faces between GPUs, and where cutting each
// slab's edges off (they run first, their faces crossing while the rest computes) gains
// kEdgeGain of it, those edges: two more cuts a slab, each a neighbour's edge more recomputed on
// both its sides (recomputed_share).
void price_faces_between_gpus(GpuMemoryPlan& p, double plane_points, std::int64_t share,
                              const Machine& m, double gpu_point_seconds, double task_seconds,
                              int across) {
  p.exchange_seconds = gpu_exchange_seconds(plane_points, m);
  p.step_seconds += p.exchange_seconds;
  if (!(p.exchange_seconds > 0) || share < 4 * kEdgePlanes) return;
  const double rest =
      gpu_point_seconds * plane_points * static_cast<double>(share - 2 * kEdgePlanes);
  const double cut = p.compute_seconds +
                     gpu_point_seconds * plane_points * 2 * recomputed_share(kAssumedDepth, 1) +
                     std::max(0.0, p.exchange_seconds - rest) + 3 * task_seconds * across;
  if (cut < (1 - kEdgeGain) * p.step_seconds) {
    p.edge_planes = kEdgePlanes;
    p.step_seconds = cut;
  }
}
}  // namespace

namespace {
// The summary of a streamed plan for the placement line.
std::string streamed_summary(const GpuMemoryPlan& p, const Machine& m, double link,
                             bool plane_extents_known, bool pipelined, bool speed_known) {
  char b[512];
  std::snprintf(b, sizeof(b),
                "streamed: %.3g bytes a GPU's share against %.3g it may hold; %lld slabs, %d "
                "steps a visit, %.3g bytes over the bus a step (the fields %.3g, their %s "
                "the rest; %.2f ms at %.2g of %.3g GB/s the busier way%s), compute %.2f ms%s%s",
                p.needed_bytes, p.available_bytes, static_cast<long long>(p.slabs), p.depth,
                p.bus_bytes_per_step, p.fields_bytes_per_step,
                m.ghost_planes_stay
                    ? (plane_extents_known ? "ghost points across and faces" : "faces")
                    : "ghost planes and faces",
                p.bus_seconds * 1e3, kStreamedBusShare, link * 1e-9,
                m.gpu_bus_bytes_per_second() > 0 ? "" : " assumed", p.compute_seconds * 1e3,
                pipelined ? " while the next slab arrives" : "",
                speed_known ? "" : " (the GPU's speed not calibrated: the bus alone)");
  return b;
}

// The share of a GPU's `slabs` that cross the bus a pass, where `stay` of them are there from the
// last pass: the blocks turn (every other pass visits a GPU's slabs in reverse), so a pass starts
// with the slabs the last one ended with (up: the one computed last and those it kept; back: the
// last one). Measured where visits are prefetched (simulated: jacobi2d 49152^2 on 4 GPUs of
// 4 GiB, 7 slabs a GPU, 4/7 of them up, 6/7 back); not priced elsewhere.
double turned_share(bool pipelined, std::int64_t slabs, std::int64_t stay) {
  if (!pipelined) return 1;
  return static_cast<double>(std::max<std::int64_t>(1, slabs - stay)) / static_cast<double>(slabs);
}

// Not even `slabs` slabs of the thinnest kind fit a GPU of `memory` bytes: they need `needed`.
void refuse_streaming(GpuMemoryPlan& p, int slabs, double needed, double memory) {
  p.possible = false;
  p.needed_bytes = needed;
  char b[320];
  std::snprintf(b, sizeof(b),
                "streaming needs %d slabs of at least %lld planes (%.3g bytes) on a GPU at once, "
                "more than the %.3g bytes it may use of its %.3g",
                slabs, static_cast<long long>(kMinThickness), p.needed_bytes, p.available_bytes,
                memory);
  p.why = b;
}

// The faces a streamed GPU holds: those of the slabs in flight or, where a visit reads the next
// slab's face from its tile (`next_slab_read`), at least a visit's four (kFaceCrossings: the
// headroom one GPU keeps; with its two rings only, 8192x8192x64 streamed along y ran 1.6x
// slower, simulated) and on several GPUs its two rings and, per neighbouring GPU, the face
// fetched from it as soon as packed (a pass before its edge slab's visit reads it) and its own
// face towards it, the last pass's and this one's (packed before the neighbour read the last: the
// spare buffers). Faces are deep beside thin slabs: heat3d 1024^3's on 4 GPUs of 4 GiB are 16
// planes, its slabs 16.
int faces_held(bool next_slab_read, int gpus) {
  const int neighbours = std::min(gpus - 1, 2);
  return next_slab_read ? std::max(kFaceCrossings, 2 + 3 * neighbours)
                        : kSlabsInFlight * kFaceCrossings;
}

// A GPU's share of `share` planes (of the part's `planes`) that its memory cannot hold: the
// depth and slab thickness whose step (the bus and the compute, overlapped where visits are
// prefetched) is the least, or not possible where even the thinnest slabs do not fit.
void plan_streamed(GpuMemoryPlan& p, double plane_points, std::int64_t planes, std::int64_t share,
                   const Machine& m, double gpu_point_seconds, double task_seconds, int across,
                   int deepest, const std::vector<double>& plane_extents) {
  const int gpus = std::max(1, m.cuda_workers);
  const double share_points = plane_points * static_cast<double>(share);
  const double memory = m.gpu_memory_bytes();
  // Streamed, the faces go through main memory with the slabs (bus bytes below), and slabs are
  // cut by the memory: no exchange between GPUs to price, no edges.
  p.streamed = true;
  const double link =
      m.gpu_bus_bytes_per_second() > 0 ? m.gpu_bus_bytes_per_second() : kAssumedBusBytesPerSecond;
  // What the visits' transfers reach of the link on its busier way (PCIe is full duplex; StarPU's
  // bus model gives one way's rate): a visit's upload and the last one's write-back cross at once.
  const double bus = kStreamedBusShare * link;
  // Streamed, the GPU's compute counts only where calibrated models give its speed: a GPU's
  // memory moves a step's points tens of times faster than the bus does, so without them the
  // bus alone prices the step (an assumed slow GPU would keep the depth shallow for nothing).
  const bool speed_known = m.gpu_point_seconds > 0;
  if (!speed_known) gpu_point_seconds = 0;
  // A visit of a slab of `t` planes at depth `d`: its fields' tiles hold d ghost planes each
  // side, which cross the bus with them unless they stay (Machine::ghost_planes_stay: the visit
  // writes them on the GPU), and it reads the faces its two neighbours packed on their last
  // visit (d planes each) and packs its own two for their next: every face crosses the bus both
  // ways, as the passes follow one another. Packed ahead (Machine::faces_packed_ahead), the face
  // a slab's next visitor on the GPU reads stays there: of a pass of `slabs`, the faces towards
  // the slab visited before (all but the first's) and to the neighbouring GPUs' cross. Read
  // from the next slab too (Machine::faces_read_from_next_slab), only those to the neighbouring
  // GPUs' cross.
  const bool next_slab_read = m.faces_packed_ahead && m.faces_read_from_next_slab;
  const auto face_bytes = [&](int d) { return d * plane_points * m.point.field; };
  const auto crossing_faces = [&](int d, std::int64_t slabs) {
    const double between_gpus = 2.0 * std::min(gpus - 1, 2);
    const double crossings =
        next_slab_read ? between_gpus / static_cast<double>(slabs)
        : m.faces_packed_ahead
            ? (2.0 * static_cast<double>(slabs - 1) + between_gpus) / static_cast<double>(slabs)
            : kFaceCrossings;
    return crossings * face_bytes(d);
  };
  // The thickest slab of which the one computed and the last one leaving fit, each with its
  // ghost planes and four faces. Where a visit reads the next slab's face from its tile, that
  // slab's kept fields (those it exchanges among them) are there too, and of the faces only the
  // two ring buffers and a visit's faces towards other GPUs (four at most).
  const bool pipelined = next_slab_read && m.visits_prefetched;
  // A plane as a slab's tiles hold it and move it: its points and, where its extents are known,
  // the ghost points of a block of `d` steps on every side across the slab (radius 1), which
  // travel with it.
  const auto held = [&](int d) {
    if (plane_extents.empty()) return plane_points;
    double points = 1;
    for (double e : plane_extents) points *= e + 2.0 * d;
    return points;
  };
  // Slabs there with their kept fields beside the one computed: the last one leaving, and the
  // one whose face a visit reads, and the next one arriving (prefetched).
  const int kept_slabs = (kSlabsInFlight - 1) + (next_slab_read ? 1 : 0) +
                         (pipelined ? kVisitsPrefetched - kVisitsAhead : 0);
  const auto in_flight_plane = [&](int d) {
    return held(d) * (m.point.all + kept_slabs * kept_bytes_per_point(m.point));
  };
  const int held_faces = faces_held(next_slab_read, gpus);
  const double up_point = kept_bytes_per_point(m.point);
  const double back_point = m.point.field;
  const auto thickest = [&](int d) {
    const double room = p.available_bytes - held_faces * face_bytes(d);
    return static_cast<std::int64_t>(std::floor(room / in_flight_plane(d))) - 2 * d;
  };
  double best = -1;
  // Even depths only: a block of an even number of steps ends in the field it started from,
  // so that the other one is scratch and never crosses the bus (an odd one ends in next, and
  // both would have to be kept).
  for (int depth = 2; depth <= std::min(deepest, kDeepestStreamDepth); depth += 2) {
    const std::int64_t t = std::min(thickest(depth), share);
    if (t < std::max<std::int64_t>(kMinThickness, depth)) break;  // deeper only thins slabs
    const std::int64_t slabs = (share + t - 1) / t;
    // The part is cut evenly into slabs x gpus slabs (even_cuts): its thinnest may be thinner
    // than t, and a slab thinner than a visit's steps reads ghost planes beyond its neighbours
    // (heat3d 1024x1024x954 on 4 GPUs of 3.6 GiB in 60 slabs of 15-16 planes at 16 steps a
    // visit: 22.8 ms a step against 2.99 predicted, simulated). Deeper only thins them.
    if (planes / (slabs * gpus) < std::max<std::int64_t>(kMinThickness, depth)) break;
    const double thick = static_cast<double>(share) / static_cast<double>(slabs);
    const double compute = gpu_point_seconds * share_points * (1 + recomputed_share(depth, thick));
    // A visit's tile (with its ghost planes, where they travel), up and back, and two faces
    // each way.
    const double tile_points = (thick + (m.ghost_planes_stay ? 0 : 2 * depth)) * held(depth);
    const double up_share = turned_share(pipelined, slabs, kept_slabs);
    const double back_share = turned_share(pipelined, slabs, 1);
    const double up = tile_points * up_point * up_share + crossing_faces(depth, slabs) / 2;
    const double back = tile_points * back_point * back_share + crossing_faces(depth, slabs) / 2;
    const double visits = static_cast<double>(slabs) / depth;  // a step's
    const double bytes = visits * (up + back);
    const double bus_seconds = visits * std::max(up, back) / bus;
    const double step = (pipelined ? std::max(bus_seconds, compute) : bus_seconds + compute) +
                        task_seconds * static_cast<double>(slabs * across) / depth;
    if (best < 0 || step < best) {
      best = step;
      p.depth = depth;
      p.slabs = slabs * gpus;
      p.compute_seconds = compute;
      p.bus_bytes_per_step = bytes * gpus;
      p.fields_bytes_per_step = share_points * (up_point + back_point) / depth * gpus;
      p.bus_seconds = bus_seconds;
      p.step_seconds = step;
    }
  }
  if (best < 0) {
    refuse_streaming(
        p, 1 + kept_slabs,
        in_flight_plane(2) * static_cast<double>(kMinThickness + 4) + held_faces * face_bytes(2),
        memory);
    return;
  }
  p.why = streamed_summary(p, m, link, !plane_extents.empty(), pipelined, speed_known);
}
}  // namespace

GpuMemoryPlan plan_gpu_memory(double plane_points, std::int64_t planes, const Machine& m,
                              double gpu_point_seconds, double task_seconds, int across,
                              int deepest, const std::vector<double>& plane_extents) {
  GpuMemoryPlan p;
  const int gpus = std::max(1, m.cuda_workers);
  p.slabs = std::min<std::int64_t>(gpus, std::max<std::int64_t>(1, planes));
  if (planes <= 0) return p;
  // A GPU's share: the thickest of the slabs, one a GPU.
  const std::int64_t share = (planes + gpus - 1) / gpus;
  const double share_points = plane_points * static_cast<double>(share);
  p.compute_seconds = gpu_point_seconds * share_points;
  p.step_seconds = p.compute_seconds + task_seconds * across;
  const double memory = m.gpu_memory_bytes();
  p.available_bytes = kUsableMemoryShare * memory;
  p.needed_bytes = share_points * m.point.all;
  if (!(memory > 0) || p.needed_bytes <= p.available_bytes) {  // resident
    price_faces_between_gpus(p, plane_points, share, m, gpu_point_seconds, task_seconds, across);
    return p;
  }

  plan_streamed(p, plane_points, planes, share, m, gpu_point_seconds, task_seconds, across, deepest,
                plane_extents);
  return p;
}

}  // namespace tessera::partition
