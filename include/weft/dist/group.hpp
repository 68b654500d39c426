// SPDX-License-Identifier: MIT
/// @file Group: a process group (a shared handle to an MPI communicator), and world().
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "weft/dist/communicator.hpp"
#include "weft/dist/state.hpp"

namespace weft::dist {

class Group;

namespace detail {
const std::shared_ptr<Communicator>& communicator_of(const Group& group);
}  // namespace detail

/// A set of ranks that run collectives together. Copies share the communicator; it lives until
/// finalize() (which frees every communicator the runtime made).
class Group {
 public:
  /// No ranks: collectives on it throw.
  Group() = default;
  Group(std::shared_ptr<detail::Communicator> comm, std::string name)
      : comm_(std::move(comm)), name_(std::move(name)) {}

  /// This process's rank in the group.
  int rank() const { return comm_ ? comm_->rank : 0; }
  int size() const { return comm_ ? int(comm_->world_ranks.size()) : 0; }
  /// "world", "dp", "dp,tp" ...: how error messages name the group.
  const std::string& name() const { return name_; }
  /// world_ranks()[k] is the world rank of group rank k.
  const std::vector<int>& world_ranks() const {
    static const std::vector<int> none;
    return comm_ ? comm_->world_ranks : none;
  }

 private:
  friend const std::shared_ptr<detail::Communicator>& detail::communicator_of(const Group& group);
  std::shared_ptr<detail::Communicator> comm_;
  std::string name_;
};

namespace detail {
inline const std::shared_ptr<Communicator>& communicator_of(const Group& group) { return group.comm_; }
}  // namespace detail

/// Every rank of the job (a private dup of MPI_COMM_WORLD).
inline Group world() {
  detail::require_active("dist::world");
  return Group(detail::state().world, "world");
}

}  // namespace weft::dist
