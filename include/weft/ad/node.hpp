// SPDX-License-Identifier: MIT
/// @file The tape: one node per recorded op, holding its value, its gradient and how to push that gradient to its parents; the backward walk in reverse topological order; NoGrad.
///
/// The tape is the graph itself (PyTorch's design): each node keeps its parents alive, a loss
/// keeps the whole graph of its computation alive, and the graph is freed when the last Var that
/// reaches it goes (a backward releases what it ran: the closures that held the saved tensors).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

namespace detail {

using weft::detail::fail;

/// Whether ops record nodes on this thread (NoGrad turns it off in a scope).
inline bool& recording() {
  thread_local bool on = true;
  return on;
}

struct NodeBase;

/// Whether an op over these nodes records: on a recording thread, with a parent that requires a
/// gradient.
template <class Nodes>
bool recording_for(const Nodes& parents) {
  if (!recording()) return false;
  for (const auto& p : parents)
    if (p && p->requires_grad) return true;
  return false;
}

/// A node of the tape, without its dtype: what the backward walk needs.
struct NodeBase : std::enable_shared_from_this<NodeBase> {
  const char* op = "leaf";               // the op that made the value (for messages and the log)
  bool requires_grad = false;
  std::vector<std::shared_ptr<NodeBase>> parents;  // the nodes the backward step writes gradients to
  /// Adds this node's gradient times the local derivatives into the parents' gradients (set for
  /// recorded ops; empty for leaves). Called once, then dropped with what it saved.
  std::function<void()> backward_step;
  bool released = false;  // a backward ran its step and freed what it saved
  bool keep_grad = false;  // a non-leaf whose gradient ad::grad returns: not freed after its step
  NodeBase() = default;
  NodeBase(const NodeBase&) = delete;
  NodeBase& operator=(const NodeBase&) = delete;
  virtual ~NodeBase() = default;
  virtual bool is_leaf() const = 0;
  /// Frees the gradient of a non-leaf after its step ran (leaves keep theirs: they accumulate).
  virtual void release_grad() = 0;
  virtual bool has_grad() const = 0;
  /// Swaps the gradient with a put-aside slot (ad::grad runs a backward without touching grad()).
  virtual void swap_aside() = 0;
};

/// A node with its value and gradient of dtype T.
template <class T>
struct Node : NodeBase {
  Tensor<T> value;
  Tensor<T> grad;  // undefined until a backward writes it
  bool leaf = false;

  bool is_leaf() const override { return leaf; }
  Tensor<T> aside;  // ad::grad: the accumulated gradient, put aside while it runs

  void release_grad() override {
    if (!leaf && !keep_grad) grad = Tensor<T>();
  }
  bool has_grad() const override { return grad.defined(); }
  void swap_aside() override { std::swap(grad, aside); }
  /// The gradient to accumulate into: zeros of the value's shape on first use.
  Tensor<T>& grad_for_accumulation() {
    if (!grad.defined()) grad = weft::zeros<T>(value.shape(), value.device());
    return grad;
  }
};

/// The nodes `root` reaches through parents that require a gradient, each after every node that
/// feeds gradient into it (reverse topological order: root first). A node freed by an earlier
/// backward is an error.
inline std::vector<NodeBase*> backward_order(NodeBase* root) {
  // Iterative depth-first post-order (a deep chain would overflow a recursive one).
  std::vector<NodeBase*> order;
  std::unordered_map<NodeBase*, bool> seen;
  std::vector<std::pair<NodeBase*, std::size_t>> stack{{root, 0}};
  seen[root] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (node->released)
      fail("ad::backward", "the graph through a '", node->op, "' node was freed by an earlier backward; compute the "
           "forward again (a backward frees the graph it ran, as torch does without retain_graph)");
    if (next < node->parents.size()) {
      NodeBase* parent = node->parents[next++].get();
      if (parent && parent->requires_grad && !seen[parent]) {
        seen[parent] = true;
        stack.push_back({parent, 0});
      }
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  // Post-order puts parents before children: reversed, every node comes after its consumers.
  return {order.rbegin(), order.rend()};
}

/// Runs the backward steps of `order` (backward_order), then frees the graph: each non-leaf's
/// step (with the tensors it saved), its gradient and its links to its parents.
inline void run_backward(const std::vector<NodeBase*>& order) {
  for (NodeBase* node : order) {
    if (node->backward_step && node->has_grad()) node->backward_step();
    if (!node->is_leaf()) {
      node->backward_step = nullptr;
      node->released = true;
      node->release_grad();
    }
  }
  // Unlinking a node can free a parent later in `order`: they all stay alive until the end.
  std::vector<std::shared_ptr<NodeBase>> unlinked;
  for (NodeBase* node : order)
    if (!node->is_leaf()) {
      unlinked.insert(unlinked.end(), node->parents.begin(), node->parents.end());
      node->parents.clear();
    }
}

}  // namespace detail

/// Records nothing in its scope, on this thread (torch.no_grad): ops on Vars return Vars that
/// require no gradient. Nests.
class NoGrad {
 public:
  NoGrad() : previous_(detail::recording()) { detail::recording() = false; }
  ~NoGrad() { detail::recording() = previous_; }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad
