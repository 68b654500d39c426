// SPDX-License-Identifier: MIT
/// @file DeviceMesh and init_device_mesh: the ranks as an n-D grid with named dims, each dim's 1-D sub-mesh a process group.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/core/device.hpp"
#include "weft/core/error.hpp"
#include "weft/dist/agreement.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/state.hpp"

namespace weft::dist {

namespace detail {
struct MeshLayout;
}  // namespace detail

/// The job's ranks laid out row-major over `shape` (rank = the row-major index of its
/// coordinate, as torch.arange(world).view(shape)). A mesh is itself a Group (all its ranks);
/// mesh["dp"] is the 1-D sub-mesh along dim "dp" that holds this rank, a Group of its own.
/// Copies share everything; sub-meshes are made once, by init_device_mesh.
class DeviceMesh : public Group {
 public:
  DeviceMesh() = default;
  DeviceMesh(Group group, std::shared_ptr<const detail::MeshLayout> layout)
      : Group(std::move(group)), layout_(std::move(layout)) {}

  inline Device device() const;
  inline const std::vector<std::int64_t>& shape() const;
  inline const std::vector<std::string>& dim_names() const;
  /// This rank's index along each dim: rank() unravelled row-major over shape().
  inline std::vector<std::int64_t> coordinate() const;
  /// The 1-D sub-mesh along `dim_name` holding this rank (its rank() is coordinate()[dim]).
  inline DeviceMesh operator[](std::string_view dim_name) const;

 private:
  std::shared_ptr<const detail::MeshLayout> layout_;
};

namespace detail {
/// What the handles of one mesh share. `dims[d]` is the sub-mesh along dim d; a 1-D mesh has no
/// entry (it is its own sub-mesh).
struct MeshLayout {
  Device device = Device::cpu();
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  std::vector<DeviceMesh> dims;
};

/// Why these arguments make no mesh of `world_size` ranks ("" when they do).
inline std::string mesh_error(const std::vector<std::int64_t>& shape, const std::vector<std::string>& names,
                              int world_size) {
  if (shape.empty()) return "the shape has no dims; pass one extent per mesh dim, e.g. {2, 2}";
  if (names.size() != shape.size())
    return weft::detail::cat("the shape has ", shape.size(), " dims but ", names.size(),
                             " names are given; name every dim once");
  std::int64_t product = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 1) return weft::detail::cat("dim '", names[d], "' has extent ", shape[d], "; extents must be >= 1");
    if (names[d].empty() || names[d].find(',') != std::string::npos)
      return weft::detail::cat("dim name '", names[d], "' must be non-empty and without commas");
    for (std::size_t e = 0; e < d; ++e)
      if (names[e] == names[d]) return weft::detail::cat("the dim name '", names[d], "' appears twice; names must be unique");
    product *= shape[d];
  }
  if (product != world_size)
    return weft::detail::cat("the shape's ", product, " ranks differ from the job's ", world_size,
                             "; the extents must multiply to the world size (mpirun -np)");
  return "";
}

inline std::string join_names(const std::vector<std::string>& names, const char* separator) {
  std::string s;
  for (std::size_t d = 0; d < names.size(); ++d) s += (d ? separator : "") + names[d];
  return s;
}
}  // namespace detail

inline Device DeviceMesh::device() const { return layout_ ? layout_->device : Device::cpu(); }

inline const std::vector<std::int64_t>& DeviceMesh::shape() const {
  static const std::vector<std::int64_t> none;
  return layout_ ? layout_->shape : none;
}

inline const std::vector<std::string>& DeviceMesh::dim_names() const {
  static const std::vector<std::string> none;
  return layout_ ? layout_->names : none;
}

inline std::vector<std::int64_t> DeviceMesh::coordinate() const {
  std::vector<std::int64_t> c(shape().size());
  std::int64_t r = rank();
  for (std::size_t d = c.size(); d-- > 0;) {
    c[d] = r % shape()[d];
    r /= shape()[d];
  }
  return c;
}

inline DeviceMesh DeviceMesh::operator[](std::string_view dim_name) const {
  const std::vector<std::string>& names = dim_names();
  for (std::size_t d = 0; d < names.size(); ++d)
    if (names[d] == dim_name) return names.size() == 1 ? *this : layout_->dims[d];
  weft::detail::fail("dist::DeviceMesh::operator[]", "the mesh has no dim named '", dim_name, "'; its dims are (",
                     detail::join_names(names, ", "), ")");
}

/// Makes the mesh and its sub-meshes (one MPI_Comm_split per dim of an n-D mesh: this call is
/// collective, every rank of the job makes it with the same arguments). Bad arguments, or
/// arguments that differ between ranks, throw the same weft::Error on every rank. The
/// communicators live until finalize().
inline DeviceMesh init_device_mesh(Device device, std::vector<std::int64_t> shape, std::vector<std::string> dim_names) {
  const char* op = "dist::init_device_mesh";
  detail::require_active(op);
  detail::RuntimeState& s = detail::state();
  const Group world_group(s.world, "world");
  detail::Call call{detail::Collective::init_device_mesh};
  call.list_length = std::int64_t(shape.size());
  call.shape_hash = detail::hash_word(detail::kHashStart, std::uint64_t(device.kind()) * 1024 + std::uint64_t(device.index()));
  for (std::int64_t e : shape) call.shape_hash = detail::hash_word(call.shape_hash, std::uint64_t(e));
  for (const std::string& name : dim_names) {
    for (char ch : name) call.shape_hash = detail::hash_word(call.shape_hash, std::uint64_t(static_cast<unsigned char>(ch)));
    call.shape_hash = detail::hash_word(call.shape_hash, 0x100);  // ends the name
  }
  call.error = detail::mesh_error(shape, dim_names, s.world_size);
  detail::agree(world_group, call, [&] {
    std::string extents;
    for (std::size_t d = 0; d < shape.size(); ++d) extents += (d ? ", " : "") + std::to_string(shape[d]);
    return weft::detail::cat("mesh [", extents, "] (", detail::join_names(dim_names, ", "), ") on ", device);
  });
  auto layout = std::make_shared<detail::MeshLayout>();
  layout->device = device;
  layout->shape = shape;
  layout->names = dim_names;
  DeviceMesh mesh(Group(s.world, detail::join_names(dim_names, ",")), layout);
  if (shape.size() > 1) {
    const std::vector<std::int64_t> here = mesh.coordinate();
    for (std::size_t d = 0; d < shape.size(); ++d) {
      // The ranks that share every coordinate but the d-th: color = the row-major index of the
      // other coordinates, key = the d-th coordinate (so the sub-mesh's rank is coordinate d).
      std::int64_t color = 0, stride_d = 1;
      for (std::size_t e = 0; e < shape.size(); ++e)
        if (e != d) color = color * shape[e] + here[e];
      for (std::size_t e = d + 1; e < shape.size(); ++e) stride_d *= shape[e];
      MPI_Comm comm;
      MPI_Comm_split(s.world->comm, int(color), int(here[d]), &comm);
      std::vector<int> ranks;
      const std::int64_t first = s.world_rank - here[d] * stride_d;
      for (std::int64_t i = 0; i < shape[d]; ++i) ranks.push_back(int(first + i * stride_d));
      auto sub_layout = std::make_shared<detail::MeshLayout>();
      sub_layout->device = device;
      sub_layout->shape = {shape[d]};
      sub_layout->names = {dim_names[d]};
      layout->dims.emplace_back(Group(detail::adopt_communicator(comm, std::move(ranks)), dim_names[d]),
                                std::move(sub_layout));
    }
  }
  return mesh;
}

}  // namespace weft::dist
