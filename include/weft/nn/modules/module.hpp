// SPDX-License-Identifier: MIT
/// @file nn::Module: the base of weft's modules: parameters, buffers and child modules registered by name, torch's dotted names, state_dict / load_state_dict in torch's format, train / eval.
///
/// A module is written as in torch: its parameters (`ad::Var`) and child modules are members,
/// registered by name in its constructor, and every walk (named_parameters, state_dict, train)
/// follows the registration order, so the names and their order are torch's for the same
/// architecture. This base declares no forward: a module's forward is a member function of its own
/// class, with the inputs and outputs that module needs.
///
/// Registration takes a pointer to the member (`register_parameter("weight", &Linear::weight)`),
/// not its address: the registry then holds nothing that points into the object, so a module is
/// movable (into a Sequential, out of a factory function) and a member Var that is assigned a new
/// parameter later is the one the walks see. Modules are not copyable: a copy would either share
/// the parameters' nodes (two "models" training one set of weights) or copy them (a fresh leaf the
/// optimizer does not hold), and torch has neither either (`copy.deepcopy` is explicit); load a
/// state_dict into a second module to copy weights.
#pragma once

#include <cxxabi.h>

#include <concepts>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <typeinfo>
#include <unordered_set>
#include <utility>
#include <vector>

#include "weft/ad/var.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/error.hpp"
#include "weft/core/from_blob.hpp"
#include "weft/io/safetensors.hpp"
#include "weft/io/tensor_bytes.hpp"

namespace weft::nn {

/// A module's tensors by their dotted names, in registration order: what io::save_safetensors
/// writes (`io::save_safetensors(path, model.state_dict())`). On the CPU the entries share the
/// parameters' elements (no copy, as torch's state_dict does); CUDA parameters are copied to the host.
using StateDict = std::vector<io::NamedTensor>;

/// The keys a `load_state_dict(sd, /*strict=*/false)` skipped (torch's `_IncompatibleKeys`):
/// parameters the checkpoint lacks (left as they were) and checkpoint keys no parameter has.
struct LoadResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

namespace detail {

using weft::detail::fail;

/// One checkpoint tensor as load_state_dict checks it: its name, dtype (a printable name), shape,
/// and its elements, read in place, when its dtype is T (undefined otherwise); `bytes` or `file`
/// (the one it came from) let a buffer of another dtype read it (read<U>). Built whole:
/// assigning to `values` would write the elements it shows, not rebind it.
template <class T>
struct CheckpointEntry {
  std::string name;
  std::string dtype;
  Shape shape;
  TensorView<const T> values;
  const io::TensorBytes* bytes = nullptr;
  const io::SafeTensors* file = nullptr;

  /// The elements as U, in place; undefined when the checkpoint's dtype is not U. WEFT_ABI_INLINE:
  /// a misaligned safetensors entry is copied through the backend (core/config.hpp, ODR safety).
  template <class U>
  WEFT_ABI_INLINE TensorView<const U> read() const {
    if constexpr (std::is_same_v<U, T>) {
      return values;
    } else if (bytes) {
      if (bytes->dtype() != dtype_of<U>) return {};
      return from_blob(reinterpret_cast<const U*>(bytes->bytes().data()), shape);
    } else {
      if (!file || io::detail::find_safetensors_dtype(file->dtype_code(name))->dtype != dtype_of<U>) return {};
      return file->get<U>(name);
    }
  }
};

/// The dynamic type's name ("weft::nn::Linear<float>", "Net"), as torch's messages name the class;
/// without the backend's inline namespace (host_tu or cuda_tu, core/config.hpp), which users never write.
inline std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                                   std::free);
  std::string name = status == 0 ? std::string(demangled.get()) : std::string(type.name());
  for (const std::string_view abi : {"host_tu::", "cuda_tu::"})
    for (std::size_t at; (at = name.find(abi)) != std::string::npos;) name.erase(at, abi.size());
  return name;
}

inline std::string quoted_list(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "\"" : ", \"") + k + "\"";
  return s;
}

}  // namespace detail

// Modules run kernels (initialization, loading): like the optimizers, they live in the namespace
// of the translation unit's backend (core/config.hpp, docs/architecture.md "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// The base of every module whose parameters have element type T (float unless given: `Linear<>`,
/// `Linear<double>`; class template argument deduction picks float for `nn::Linear fc(4, 8)`).
/// A module's children are `Module<T>` too: one dtype per tree, which is what one optimizer's
/// parameter list and one safetensors dtype check need (a bfloat16 model is `Module<bfloat16>`).
template <class T = float>
class Module {
  static_assert(is_floating_v<T>, "weft::nn modules hold floating-point parameters (float, double, half, bfloat16)");

 public:
  using value_type = T;

  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  Module(Module&&) noexcept = default;
  Module& operator=(Module&&) noexcept = default;

  /// Every parameter below this module with its dotted name ("fc1.weight", "0.bias"): this
  /// module's own in registration order, then each child's, recursively (torch's order). A
  /// parameter registered under two names (tied weights) appears once, under its first name, as
  /// in torch, so that an optimizer given these updates it once.
  std::vector<std::pair<std::string, ad::Var<T>>> named_parameters() const {
    std::vector<std::pair<std::string, ad::Var<T>>> out;
    std::unordered_set<const void*> seen;
    for_each_parameter([&](std::string name, const ad::Var<T>& p) {
      if (seen.insert(p.node().get()).second) out.emplace_back(std::move(name), p);
    });
    return out;
  }

  /// The module's computation on a Var (y = module(x)); a module whose input is not one Var
  /// (nn::Embedding takes indices) has its own `forward` and refuses this one.
  virtual ad::Var<T> forward(const ad::Var<T>& x) {
    weft::detail::fail("nn::Module::forward", detail::type_name(typeid(*this)), " does not take one Var (got shape ",
                       x.shape(), "); call its own forward with the inputs it takes");
  }
  ad::Var<T> operator()(const ad::Var<T>& x) { return forward(x); }

  /// named_parameters() without the names: handles that share the parameters' nodes (an optimizer
  /// built on them updates this module's weights, and sees what load_state_dict writes).
  std::vector<ad::Var<T>> parameters() const {
    std::vector<ad::Var<T>> out;
    for (auto& [name, p] : named_parameters()) out.push_back(std::move(p));
    return out;
  }

  /// Every parameter's and buffer's value by its dotted name, in torch's order (per module its
  /// parameters, then its buffers, then each child's), tied weights under each of their names
  /// (as torch's state_dict, so that torch's load_state_dict(strict=True) accepts the file).
  StateDict state_dict() const {
    StateDict out;
    save_state(out, "");
    return out;
  }

  /// Copies the checkpoint's tensors into the parameters of the same names, in place (through
  /// `data()`: Vars held elsewhere, by an optimizer, see the new values). Everything is checked
  /// first and nothing is written when anything is wrong: one weft::Error lists every missing key,
  /// every unexpected key (both only when `strict`), every tensor whose shape differs from its
  /// parameter's and every tensor whose dtype is not T (weft does not convert silently: load a
  /// float64 checkpoint into `Module<double>`, or convert the file). Returns the keys it skipped.
  LoadResult load_state_dict(const StateDict& state, bool strict = true) {
    std::vector<detail::CheckpointEntry<T>> entries;
    for (const io::NamedTensor& t : state) {
      const bool readable = t.tensor.dtype() == dtype_of<T>;
      entries.push_back({t.name, dtype_name(t.tensor.dtype()), t.tensor.shape(),
                         readable ? from_blob(reinterpret_cast<const T*>(t.tensor.bytes().data()), t.tensor.shape())
                                  : TensorView<const T>(),
                         &t.tensor, nullptr});
    }
    return load_entries(entries, strict);
  }

  /// The same from a safetensors file (`model.load_state_dict(io::SafeTensors(path))`), read in
  /// place from the mapping; tensors of the format's dtypes that weft lacks (U8, ...) count as
  /// tensors of the wrong dtype.
  LoadResult load_state_dict(const io::SafeTensors& file, bool strict = true) {
    std::vector<detail::CheckpointEntry<T>> entries;
    for (const std::string& key : file.keys()) {
      const std::string_view code = file.dtype_code(key);
      const auto* format = io::detail::find_safetensors_dtype(code);
      entries.push_back({key, format->dtype ? dtype_name(*format->dtype) : std::string(code), file.shape(key),
                         format->dtype == dtype_of<T> ? file.get<T>(key) : TensorView<const T>(), nullptr, &file});
    }
    return load_entries(entries, strict);
  }

  /// Sets training mode on this module and every module below it (torch's `train(mode)`): what
  /// a forward reads to choose, e.g. whether Dropout drops.
  void train(bool mode = true) {
    for_each_module([mode](Module& m) { m.training_ = mode; });
  }
  /// train(false).
  void eval() { train(false); }
  /// Calls f(module) for this module and every module below it, parents first (torch's
  /// `apply`): e.g. nn::prepack finds the convolutions this way.
  template <class F>
  void apply(F&& f) {
    for_each_module(f);
  }
  bool is_training() const { return training_; }

 protected:
  Module() = default;

  /// Registers the member `member` of the module being constructed (`Owner`, the class that
  /// declares it) as the parameter `name`. A member that holds no Var (a Linear without bias)
  /// is skipped by every walk, as torch skips a parameter registered as None.
  template <class Owner>
    requires std::derived_from<Owner, Module>
  void register_parameter(std::string name, ad::Var<T> Owner::*member) {
    check_registration("nn::Module::register_parameter", name, typeid(Owner), dynamic_cast<Owner*>(this) != nullptr);
    parameters_.push_back({std::move(name), [member](const Module& self) -> const ad::Var<T>& {
                             return static_cast<const Owner&>(self).*member;
                           }});
  }

  /// Registers the member tensor `member` of the module being constructed as the buffer `name`
  /// (torch's register_buffer): state that is not a parameter (no gradient, no optimizer) but is
  /// saved and loaded with the state_dict, of any dtype (BatchNorm's running statistics, its
  /// int64 num_batches_tracked). An undefined tensor is skipped, as torch skips a None buffer.
  template <class Owner, class U>
    requires std::derived_from<Owner, Module>
  void register_buffer(std::string name, Tensor<U> Owner::*member) {
    check_registration("nn::Module::register_buffer", name, typeid(Owner), dynamic_cast<Owner*>(this) != nullptr);
    auto get = [member](const Module& self) -> Tensor<U>& {
      return const_cast<Owner&>(static_cast<const Owner&>(self)).*member;
    };
    buffers_.push_back(
        {std::move(name), [get](const Module& self) { return get(self).defined(); },
         [get](const Module& self, std::string key, StateDict& out) { out.push_back({std::move(key), get(self)}); },
         [get](const Module& self, const detail::CheckpointEntry<T>& e, bool write) -> std::string {
           Tensor<U>& t = get(self);
           if (e.shape != t.shape())
             return weft::detail::cat("size mismatch for ", e.name, ": copying a param with shape ", e.shape,
                                      " from checkpoint, the shape in current model is ", t.shape(), ".");
           const TensorView<const U> source = e.template read<U>();
           if (!source.defined())
             return weft::detail::cat("dtype mismatch for ", e.name, ": copying a param of dtype ", e.dtype,
                                      " from checkpoint, the dtype in current model is ", dtype_name<U>(), ".");
           if (write) {
             TensorView<U> dst = t;
             if (dst.device().is_cpu()) dst = source;
             else dst = source.to(dst.device());
           }
           return {};
         }});
  }

  /// Registers the member module `member` of the module being constructed as the child `name`.
  template <class Owner, class Child>
    requires std::derived_from<Owner, Module> && std::derived_from<Child, Module>
  void register_module(std::string name, Child Owner::*member) {
    check_registration("nn::Module::register_module", name, typeid(Owner), dynamic_cast<Owner*>(this) != nullptr);
    children_.push_back({std::move(name), [member](Module& self) -> Module& { return static_cast<Owner&>(self).*member; }});
  }

  /// Registers a child that the module reaches through a function of itself rather than as a
  /// member (Sequential: its i-th element). `child` must not depend on the object's address, so
  /// that the module stays movable.
  void register_module(std::string name, std::function<Module&(Module&)> child) {
    check_registration("nn::Module::register_module", name, typeid(*this), true);
    children_.push_back({std::move(name), std::move(child)});
  }

 private:
  struct ParameterSlot {
    std::string name;
    std::function<const ad::Var<T>&(const Module&)> get;
  };
  struct ChildSlot {
    std::string name;
    std::function<Module&(Module&)> get;
  };
  /// A buffer, its dtype erased: whether it holds a tensor, its state_dict entry, and its load
  /// (the mismatch it finds, "" when none; writes only when asked and nothing mismatched).
  struct BufferSlot {
    std::string name;
    std::function<bool(const Module&)> defined;
    std::function<void(const Module&, std::string, StateDict&)> save;
    std::function<std::string(const Module&, const detail::CheckpointEntry<T>&, bool)> load;
  };

  void check_registration(const char* op, const std::string& name, const std::type_info& owner, bool owns) const {
    const std::string where = detail::type_name(typeid(*this));
    if (!owns)
      detail::fail(op, "name \"", name, "\": the member belongs to ", detail::type_name(owner),
                   ", which ", where, " is not; register members of the module being constructed");
    if (name.empty() || name.find('.') != std::string::npos)
      detail::fail(op, "name \"", name, "\" in ", where,
                   ": a name must be non-empty and hold no '.' (the dot joins the names of nested modules)");
    for (const ParameterSlot& p : parameters_)
      if (p.name == name) detail::fail(op, "name \"", name, "\" in ", where, ": a parameter already has that name; pick another");
    for (const ChildSlot& c : children_)
      if (c.name == name) detail::fail(op, "name \"", name, "\" in ", where, ": a child module already has that name; pick another");
    for (const BufferSlot& b : buffers_)
      if (b.name == name) detail::fail(op, "name \"", name, "\" in ", where, ": a buffer already has that name; pick another");
  }

  /// Appends this module's parameters, then its buffers, then each child's state, to `out`.
  void save_state(StateDict& out, const std::string& prefix) const {
    for (const ParameterSlot& p : parameters_) {
      const ad::Var<T>& v = p.get(*this);
      if (v.defined()) out.push_back({prefix + p.name, v.value()});
    }
    for (const BufferSlot& b : buffers_)
      if (b.defined(*this)) b.save(*this, prefix + b.name, out);
    for (const ChildSlot& c : children_) c.get(const_cast<Module&>(*this)).save_state(out, prefix + c.name + ".");
  }

  /// Calls f(dotted name, slot, owning module) for every buffer that holds a tensor, below too.
  template <class F>
  void for_each_buffer(F&& f, const std::string& prefix = "") const {
    for (const BufferSlot& b : buffers_)
      if (b.defined(*this)) f(prefix + b.name, b, *this);
    for (const ChildSlot& c : children_) c.get(const_cast<Module&>(*this)).for_each_buffer(f, prefix + c.name + ".");
  }

  /// Calls f(dotted name, Var) for every registered parameter that holds a Var: this module's,
  /// then each child's, recursively. The walk reads only; children are reached through the
  /// non-const accessor that train() needs too.
  template <class F>
  void for_each_parameter(F&& f, const std::string& prefix = "") const {
    for (const ParameterSlot& p : parameters_) {
      const ad::Var<T>& v = p.get(*this);
      if (v.defined()) f(prefix + p.name, v);
    }
    for (const ChildSlot& c : children_) c.get(const_cast<Module&>(*this)).for_each_parameter(f, prefix + c.name + ".");
  }

  /// Calls f(module) for this module and every module below it.
  template <class F>
  void for_each_module(F&& f) {
    f(*this);
    for (const ChildSlot& c : children_) c.get(*this).for_each_module(f);
  }

  LoadResult load_entries(const std::vector<detail::CheckpointEntry<T>>& entries, bool strict) {
    std::map<std::string, const detail::CheckpointEntry<T>*> by_name;
    std::vector<std::string> repeated, mismatches;
    for (const detail::CheckpointEntry<T>& e : entries)
      if (!by_name.emplace(e.name, &e).second) repeated.push_back(e.name);

    LoadResult skipped;
    std::vector<std::pair<ad::Var<T>, const detail::CheckpointEntry<T>*>> writes;
    std::unordered_set<std::string> used;
    for_each_parameter([&](const std::string& name, const ad::Var<T>& p) {
      auto it = by_name.find(name);
      if (it == by_name.end()) return skipped.missing_keys.push_back(name);
      used.insert(name);
      const detail::CheckpointEntry<T>& e = *it->second;
      if (e.shape != p.shape())
        mismatches.push_back(weft::detail::cat("size mismatch for ", name, ": copying a param with shape ", e.shape,
                                               " from checkpoint, the shape in current model is ", p.shape(), "."));
      else if (!e.values.defined())
        mismatches.push_back(weft::detail::cat("dtype mismatch for ", name, ": copying a param of dtype ", e.dtype,
                                               " from checkpoint, the dtype in current model is ", dtype_name<T>(), "."));
      else
        writes.emplace_back(p, &e);
    });
    std::vector<std::tuple<const BufferSlot*, const Module*, const detail::CheckpointEntry<T>*>> buffer_writes;
    for_each_buffer([&](const std::string& name, const BufferSlot& b, const Module& owner) {
      auto it = by_name.find(name);
      if (it == by_name.end()) return skipped.missing_keys.push_back(name);
      used.insert(name);
      const std::string problem = b.load(owner, *it->second, false);
      if (problem.empty()) buffer_writes.emplace_back(&b, &owner, it->second);
      else mismatches.push_back(problem);
    });
    for (const detail::CheckpointEntry<T>& e : entries)
      if (!used.count(e.name)) skipped.unexpected_keys.push_back(e.name);

    const bool key_errors = strict && (!skipped.missing_keys.empty() || !skipped.unexpected_keys.empty());
    if (key_errors || !mismatches.empty() || !repeated.empty()) {
      std::string message;
      if (strict && !skipped.missing_keys.empty())
        message += "\n  Missing key(s) in state_dict: " + detail::quoted_list(skipped.missing_keys) + ".";
      if (strict && !skipped.unexpected_keys.empty())
        message += "\n  Unexpected key(s) in state_dict: " + detail::quoted_list(skipped.unexpected_keys) + ".";
      if (!repeated.empty()) message += "\n  Repeated key(s) in state_dict: " + detail::quoted_list(repeated) + ".";
      for (const std::string& m : mismatches) message += "\n  " + m;
      detail::fail("nn::Module::load_state_dict", "Error(s) in loading state_dict for ", detail::type_name(typeid(*this)),
                   " (nothing was loaded):", message,
                   "\n  Fix: save the checkpoint from the same architecture and dtype (named_parameters() lists the "
                   "names and shapes expected)", strict ? ", or pass strict = false to skip missing and unexpected keys" : "",
                   ".");
    }
    // The checkpoint is in host memory; a parameter on another device gets a device copy first,
    // since one assignment runs on one device.
    for (auto& [p, e] : writes) {
      TensorView<T> dst = p.data();
      if (dst.device().is_cpu()) dst = e->values;
      else dst = e->values.to(dst.device());
    }
    for (auto& [b, owner, e] : buffer_writes) b->load(*owner, *e, true);
    return skipped;
  }

  std::vector<ParameterSlot> parameters_;
  std::vector<ChildSlot> children_;
  std::vector<BufferSlot> buffers_;
  bool training_ = true;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
