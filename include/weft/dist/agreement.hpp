// SPDX-License-Identifier: MIT
/// @file The agreement before every collective: the ranks exchange a small header and throw the same weft::Error when they disagree.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/shape.hpp"
#include "weft/dist/control.hpp"
#include "weft/dist/group.hpp"
#include "weft/dist/reduce_op.hpp"
#include "weft/dist/state.hpp"

namespace weft::dist::detail {

/// What a rank calls; the list collectives have codes of their own, so that a rank passing a
/// list and one passing a tensor disagree.
enum class Collective : std::int32_t {
  all_reduce,
  broadcast,
  all_gather,
  reduce_scatter,
  barrier,
  list_all_reduce,
  list_broadcast,
  list_all_gather,
  list_reduce_scatter,
  init_device_mesh,
};

/// "dist::all_reduce": the name weft::Error messages give (after "weft::").
constexpr const char* qualified_collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce:
    case Collective::list_all_reduce: return "dist::all_reduce";
    case Collective::broadcast:
    case Collective::list_broadcast: return "dist::broadcast";
    case Collective::all_gather:
    case Collective::list_all_gather: return "dist::all_gather";
    case Collective::reduce_scatter:
    case Collective::list_reduce_scatter: return "dist::reduce_scatter";
    case Collective::barrier: return "dist::barrier";
    case Collective::init_device_mesh: return "dist::init_device_mesh";
  }
  return "dist::?";
}

/// "all_reduce".
constexpr const char* collective_name(Collective c) { return qualified_collective_name(c) + 6; }

/// One rank's side of a collective, as the agreement compares it. Fields that do not apply stay
/// -1; `shape_hash` folds every shape that must match across ranks (hash_shape); `error` is this
/// rank's bad input ("" when none), which every rank of the group then throws. `back_to_back`
/// is not compared but combined: whether this rank's list lies back to back in one storage
/// (agree returns whether every rank's does, so that all of them can choose the same buckets).
struct Call {
  explicit Call(Collective c) : collective(c) {}
  Collective collective;
  int dtype = -1;  // DType
  int root = -1;
  int reduce_op = -1;  // ReduceOp
  std::int64_t list_length = -1;
  std::int64_t numel = 0;
  std::uint64_t shape_hash = 0;
  std::string error;
  bool back_to_back = false;
};

/// The fixed-size form of a Call that travels in the first exchange.
struct Header {
  std::int32_t collective, dtype, root, reduce_op;
  std::int64_t list_length, numel;
  std::uint64_t shape_hash;
  std::int32_t status;        // 1: the rank has an error to report
  std::int32_t back_to_back;  // 1: the rank's list lies back to back in one storage
};

constexpr std::uint64_t kHashStart = 14695981039346656037ull;

/// FNV-1a step: h folded with the 8 bytes of `word`.
inline std::uint64_t hash_word(std::uint64_t h, std::uint64_t word) {
  for (int b = 0; b < 8; ++b) {
    h ^= (word >> (8 * b)) & 0xffu;
    h *= 1099511628211ull;
  }
  return h;
}

/// The rank and extents folded into `h` (a list folds its shapes one after the other).
inline std::uint64_t hash_shape(const Shape& shape, std::uint64_t h = kHashStart) {
  h = hash_word(h, std::uint64_t(shape.rank()));
  for (std::int64_t e : shape) h = hash_word(h, std::uint64_t(e));
  return h;
}

/// "float32 [4, 8]": how a message shows one rank's tensor.
inline std::string describe_tensor(DType dtype, const Shape& shape) {
  return weft::detail::cat(dtype_name(dtype), ' ', shape);
}

/// "group 'dp' (world ranks 0, 2)".
inline std::string group_label(const Group& group) {
  std::string s = "group '" + group.name() + "' (world ranks ";
  for (std::size_t k = 0; k < group.world_ranks().size(); ++k) s += (k ? ", " : "") + std::to_string(group.world_ranks()[k]);
  return s + ")";
}

inline bool same_call(const Header& a, const Header& b) {
  return a.collective == b.collective && a.dtype == b.dtype && a.root == b.root && a.reduce_op == b.reduce_op &&
         a.list_length == b.list_length && a.numel == b.numel && a.shape_hash == b.shape_hash;
}

/// "all_reduce(sum)", "broadcast(root 0)", "barrier".
inline std::string call_signature(const Header& h) {
  std::string s = collective_name(Collective(h.collective));
  if (h.reduce_op >= 0) s += std::string("(") + reduce_op_name(ReduceOp(h.reduce_op)) + ")";
  if (h.root >= 0) s += "(root " + std::to_string(h.root) + ")";
  return s;
}

/// "ranks 0, 2" or "rank 1".
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

/// The message every rank throws when a header shows an error or a disagreement. It is built
/// from what every rank received (the headers, then each rank's description and error), so the
/// text is the same on every rank.
inline std::string disagreement_message(const Group& group, const std::vector<Header>& headers,
                                        const std::vector<std::string>& descriptions,
                                        const std::vector<std::string>& errors) {
  const int n = int(headers.size());
  std::vector<std::string> seen;  // the collectives called, in rank order: "all_reduce / broadcast"
  std::string names;
  for (int k = 0; k < n; ++k) {
    const std::string name = collective_name(Collective(headers[k].collective));
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    names += (seen.empty() ? "" : " / ") + name;
    seen.push_back(name);
  }
  std::string text = "weft::dist::" + names + " over " + group_label(group) + ": ";
  // Errors: ranks with the same text share one entry, in the order of their first rank.
  std::vector<bool> told(std::size_t(n), false);
  std::string reported;
  for (int k = 0; k < n; ++k) {
    if (errors[k].empty() || told[k]) continue;
    std::vector<int> ranks;
    for (int j = k; j < n; ++j)
      if (errors[j] == errors[k]) {
        ranks.push_back(j);
        told[j] = true;
      }
    reported += (reported.empty() ? "" : "; ") + rank_list(ranks) + ": " + errors[k];
  }
  bool differ[4] = {};  // collective, reduce op, root, dtype and shapes
  for (int k = 1; k < n; ++k) {
    const Header& a = headers[0];
    const Header& b = headers[k];
    differ[0] |= a.collective != b.collective;
    differ[1] |= a.reduce_op != b.reduce_op;
    differ[2] |= a.root != b.root;
    differ[3] |= a.dtype != b.dtype || a.list_length != b.list_length || a.numel != b.numel || a.shape_hash != b.shape_hash;
  }
  if (differ[0] || differ[1] || differ[2] || differ[3]) {
    const bool show_call = differ[0] || differ[1] || differ[2];
    std::string has;
    for (int k = 0; k < n; ++k)
      has += (k ? ", rank " : "rank ") + std::to_string(k) + " has " +
             (show_call ? call_signature(headers[k]) + (descriptions[k].empty() ? "" : " ") : "") + descriptions[k];
    std::string fix;
    if (differ[0]) {
      fix = "every rank must call the same collective";
    } else {
      const char* fields[] = {"reduce op", "root", "dtype and shapes"};
      for (int f = 0; f < 3; ++f)
        if (differ[f + 1]) fix += (fix.empty() ? "" : ", ") + std::string(fields[f]);
      fix = "every rank must pass the same " + fix;
    }
    reported += (reported.empty() ? "" : "; ") + std::string("the ranks disagree: ") + has + "; " + fix;
  }
  return text + reported;
}

/// Gathers every rank's string (a blocking exchange: every rank of the group reaches it).
inline std::vector<std::string> gather_strings(MPI_Comm comm, int size, const std::string& mine) {
  int length = int(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int k = 0; k < size; ++k) {
    offsets[k] = total;
    total += lengths[k];
  }
  std::string all(std::size_t(total), '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm);
  std::vector<std::string> out;
  for (int k = 0; k < size; ++k) out.push_back(all.substr(std::size_t(offsets[k]), std::size_t(lengths[k])));
  return out;
}

/// The group rank of a member that left without beginning exchange number `index` on `c`
/// (so the exchange can never complete), or -1.
inline int member_gone_before(const Communicator& c, std::int64_t index) {
  const RuntimeState& s = state();
  for (std::size_t k = 0; k < c.world_ranks.size(); ++k) {
    auto gone = s.departed.find(c.world_ranks[k]);
    if (gone == s.departed.end()) continue;
    auto begun = gone->second.exchanges.find(c.id);
    if (begun == gone->second.exchanges.end() || begun->second <= index) return int(k);
  }
  return -1;
}

/// Every collective starts here: exchanges this rank's Call with the group's ranks (one
/// MPI_Iallgather of a 48-byte header). Returns when every rank made the same call with no
/// error. Otherwise every rank throws the same weft::Error (after a second exchange of the
/// descriptions `describe` gives: "float32 [4, 8]"); nothing has been written. Returns whether
/// every rank's Call has back_to_back set. While it waits,
/// it watches the control channel: when a member leaves the job without entering this exchange,
/// it throws an Error naming the collective, the group, the rank and its reason, and the
/// runtime is broken (the abandoned exchange cannot be cancelled): later collectives throw at
/// once, and finalize ends the job with MPI_Abort.
inline bool agree(const Group& group, const Call& call, const std::function<std::string()>& describe) {
  const char* op = qualified_collective_name(call.collective);
  require_active(op);
  const std::shared_ptr<Communicator>& c = communicator_of(group);
  if (!c) weft::detail::fail(op, "the group is empty (a default-constructed Group); pass world() or a mesh");
  RuntimeState& s = state();
  if (!s.broken.empty())
    throw Error(weft::detail::cat("weft::", op, " over ", group_label(group),
                                  ": the runtime is broken by an earlier failure; finalize ends the job. The failure: ",
                                  s.broken));
  const int n = group.size();
  // [0, n): the received headers; [n]: this rank's, which MPI may read until the exchange ends.
  // Reused from one exchange to the next on the communicator, unless one was abandoned.
  if (!c->header_buffer) c->header_buffer = std::make_shared<std::vector<Header>>(std::size_t(n) + 1);
  const auto headers = std::static_pointer_cast<std::vector<Header>>(c->header_buffer);
  Header& mine = (*headers)[std::size_t(n)];
  mine = Header{std::int32_t(call.collective), call.dtype, call.root, call.reduce_op, call.list_length,
                call.numel, call.shape_hash, call.error.empty() ? 0 : 1, call.back_to_back ? 1 : 0};
  const std::int64_t index = c->exchanges++;
  MPI_Request request;
  MPI_Iallgather(&mine, int(sizeof(Header)), MPI_BYTE, headers->data(), int(sizeof(Header)), MPI_BYTE, c->comm,
                 &request);
  for (int spin = 0;; ++spin) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (spin >= 64) std::this_thread::yield();  // ranks may outnumber cores (mpirun --oversubscribe)
    if (spin % 16 != 15) continue;              // the departures less often: MPI_Iprobe costs as much
    poll_departures();
    if (int gone = member_gone_before(*c, index); gone >= 0) {
      const int world_rank = c->world_ranks[std::size_t(gone)];
      s.abandoned.push_back(headers);
      c->header_buffer.reset();
      s.broken = weft::detail::cat(
          "weft::", op, " over ", group_label(group), ": rank ", gone, " (world rank ", world_rank,
          ") left the job without entering it (", s.departed[world_rank].reason,
          "); the runtime is now broken: later collectives throw, and finalize ends the job with MPI_Abort");
      throw Error(s.broken);
    }
  }
  bool agreed = true, back_to_back = true;
  for (int k = 0; k < n; ++k) {
    agreed &= (*headers)[k].status == 0 && same_call((*headers)[k], (*headers)[0]);
    back_to_back &= (*headers)[k].back_to_back == 1;
  }
  if (agreed) return back_to_back;
  // Every rank saw the same headers, so every rank is here: a second, blocking exchange.
  const std::vector<std::string> texts = gather_strings(c->comm, n, describe() + '\x1f' + call.error);
  std::vector<std::string> descriptions, errors;
  for (const std::string& t : texts) {
    const std::size_t cut = t.find('\x1f');
    descriptions.push_back(t.substr(0, cut));
    errors.push_back(t.substr(cut + 1));
  }
  throw Error(disagreement_message(group, std::vector<Header>(headers->begin(), headers->end() - 1), descriptions, errors));
}

}  // namespace weft::dist::detail
