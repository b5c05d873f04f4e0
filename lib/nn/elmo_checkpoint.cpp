#include "nn/elmo_checkpoint.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "h5/h5.hpp"
#include "nn/checkpoint.hpp"
#include "nn/config_json.hpp"

namespace kglm::nn {

namespace {

// [r, c] host F32 → [c, r].
Tensor transposed(const Tensor& t) {
  const int64_t r = t.dim(0), c = t.dim(1);
  Tensor out = Tensor::empty({c, r});
  const float* in = t.data<float>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) o[j * r + i] = in[i * c + j];
  return out;
}

// The rows of a over the rows of b (host F32, same widths).
Tensor stacked(const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty({a.dim(0) + b.dim(0), a.dim(1)});
  out.rows(0, a.dim(0)).copy_from(a);
  out.rows(a.dim(0), out.dim(0)).copy_from(b);
  return out;
}

std::string cell_prefix(int direction, int64_t layer) {
  return "RNN_" + std::to_string(direction) + "/RNN/MultiRNNCell/Cell" + std::to_string(layer) + "/LSTMCell/";
}

// Walks every (bilm-tf tensors ↔ parameter) pair: visit(parameter name, bilm names and shapes,
// to_parameter(bilm tensors) → the parameter's host value, from_parameter(value) → bilm tensors).
struct Mapping {
  std::string parameter;
  std::vector<std::pair<std::string, Shape>> bilm;
  std::function<Tensor(const std::vector<Tensor>&)> to_parameter;
  std::function<std::vector<Tensor>(const Tensor&)> from_parameter;
};

std::vector<Mapping> mappings(const ElmoOptions& o, int64_t vocabulary, bool with_softmax) {
  const int64_t e = o.char_embedding, f = o.filter_total(), p = o.projection, c = o.cell;
  auto same = [](const std::vector<Tensor>& t) { return t[0].clone(); };
  auto same_back = [](const Tensor& t) { return std::vector<Tensor>{t.clone()}; };
  auto flip = [](const std::vector<Tensor>& t) { return transposed(t[0]); };
  auto flip_back = [](const Tensor& t) { return std::vector<Tensor>{transposed(t)}; };
  std::vector<Mapping> m;
  m.push_back({"char_embed", {{"char_embed", {261, e}}}, same, same_back});
  for (size_t i = 0; i < o.filters.size(); ++i) {
    const int64_t w = o.filters[i].width, n = o.filters[i].count;
    const std::string k = std::to_string(i);
    m.push_back({"CNN/W_cnn_" + k,
                 {{"CNN/W_cnn_" + k, {1, w, e, n}}},
                 [w, e, n](const std::vector<Tensor>& t) {
                   return transposed(t[0].view({w * e, n}));
                 },
                 [w, e, n](const Tensor& v) {
                   return std::vector<Tensor>{transposed(v).view({1, w, e, n})};
                 }});
    m.push_back({"CNN/b_cnn_" + k, {{"CNN/b_cnn_" + k, {n}}}, same, same_back});
  }
  for (int64_t h = 0; h < o.highways; ++h) {
    const std::string g = "CNN_high_" + std::to_string(h) + "/";
    m.push_back({g + "W",
                 {{g + "W_transform", {f, f}}, {g + "W_carry", {f, f}}},
                 [](const std::vector<Tensor>& t) { return stacked(transposed(t[0]), transposed(t[1])); },
                 [f](const Tensor& v) {
                   return std::vector<Tensor>{transposed(v.rows(0, f)), transposed(v.rows(f, 2 * f))};
                 }});
    m.push_back({g + "b",
                 {{g + "b_transform", {f}}, {g + "b_carry", {f}}},
                 [f](const std::vector<Tensor>& t) {
                   return stacked(t[0].view({f, 1}), t[1].view({f, 1})).view({2 * f});
                 },
                 [f](const Tensor& v) {
                   const Tensor rows = v.view({2 * f, 1});
                   return std::vector<Tensor>{rows.rows(0, f).clone().view({f}), rows.rows(f, 2 * f).clone().view({f})};
                 }});
  }
  if (f != p) {
    m.push_back({"CNN_proj/W_proj", {{"CNN_proj/W_proj", {f, p}}}, flip, flip_back});
    m.push_back({"CNN_proj/b_proj", {{"CNN_proj/b_proj", {p}}}, same, same_back});
  }
  for (int d = 0; d < (o.bidirectional ? 2 : 1); ++d)
    for (int64_t l = 0; l < o.layers; ++l) {
      const std::string cell = cell_prefix(d, l);
      // W_0 is split in two parameters: each mapping reads (or writes) its half; export joins them.
      m.push_back({cell + "W_x",
                   {{cell + "W_0", {2 * p, 4 * c}}},
                   [p](const std::vector<Tensor>& t) { return transposed(t[0].rows(0, p)); },
                   nullptr});
      m.push_back({cell + "W_h",
                   {{cell + "W_0", {2 * p, 4 * c}}},
                   [p](const std::vector<Tensor>& t) { return transposed(t[0].rows(p, 2 * p)); },
                   nullptr});
      m.push_back({cell + "B", {{cell + "B", {4 * c}}}, same, same_back});
      m.push_back({cell + "W_P_0", {{cell + "W_P_0", {c, p}}}, flip, flip_back});
    }
  if (with_softmax) {
    m.push_back({"softmax/W", {{"softmax/W", {vocabulary, p}}}, same, same_back});
    m.push_back({"softmax/b", {{"softmax/b", {vocabulary}}}, same, same_back});
  }
  return m;
}

int64_t vocabulary_of(const ParameterStore& params) {
  const Parameter* w = params.find("softmax/W");
  if (!w) throw Error("ELMo checkpoint: the parameters are not an ELMo model's (no softmax/W)");
  return w->shape[0];
}

}  // namespace

void import_bilm_tensors(const BilmTensorSource& source, const ElmoOptions& options, bool with_softmax,
                         ParameterStore& params) {
  for (const Mapping& m : mappings(options, vocabulary_of(params), with_softmax)) {
    std::vector<Tensor> tensors;
    for (const auto& [name, shape] : m.bilm) tensors.push_back(source(name, shape));
    Parameter& p = params.get(m.parameter);
    const Tensor value = m.to_parameter(tensors);
    if (value.shape() != p.shape)
      throw Error("ELMo checkpoint: " + m.bilm[0].first + " gives " + m.parameter + " the shape " +
                  shape_string(value.shape()) + ", the model's is " + shape_string(p.shape));
    p.value.copy_from(value);
  }
  params.refresh_compute();
}

std::vector<std::pair<std::string, Tensor>> export_bilm_tensors(const ParameterStore& params,
                                                                const ElmoOptions& options, bool with_softmax,
                                                                bool gradients) {
  auto host = [&](const std::string& name) {
    const Parameter& p = *params.find(name);
    if (gradients && !p.grad.defined()) throw Error("ELMo checkpoint: " + name + " has no gradient");
    return (gradients ? p.grad : p.value).to(Device::Cpu);
  };
  std::vector<std::pair<std::string, Tensor>> out;
  const std::vector<Mapping> all = mappings(options, vocabulary_of(params), with_softmax);
  for (size_t i = 0; i < all.size(); ++i) {
    const Mapping& m = all[i];
    const Tensor value = host(m.parameter);
    if (m.from_parameter) {
      const std::vector<Tensor> tensors = m.from_parameter(value);
      for (size_t k = 0; k < tensors.size(); ++k) out.emplace_back(m.bilm[k].first, tensors[k]);
      continue;
    }
    // W_x, then W_h (the next mapping): W_0 = [W_xᵀ; W_hᵀ].
    const Tensor h = host(all[i + 1].parameter);
    out.emplace_back(m.bilm[0].first, stacked(transposed(value), transposed(h)));
    ++i;
  }
  return out;
}

void write_bilm_weights(const std::filesystem::path& hdf5, const ParameterStore& params, const ElmoOptions& options,
                        bool with_softmax) {
  AtomicPath atomic(hdf5.string());
  {
    h5::File file = h5::File::create(atomic.temp());
    for (const auto& [name, tensor] : export_bilm_tensors(params, options, with_softmax)) {
      std::vector<uint64_t> dims(tensor.shape().begin(), tensor.shape().end());
      h5::write_float_array(file.root(), name, tensor.data<float>(), dims);
    }
    file.close();
  }
  atomic.commit();
}

void read_bilm_weights(const std::filesystem::path& hdf5, const ElmoOptions& options, bool with_softmax,
                       ParameterStore& params) {
  const h5::File file = h5::File::open(hdf5.string());
  import_bilm_tensors(
      [&](const std::string& name, const Shape& shape) {
        h5::FloatArray a = h5::read_float_array(file.root(), name);
        const Shape got(a.dims.begin(), a.dims.end());
        if (got != shape)
          throw Error(hdf5.string() + ": " + name + " is " + shape_string(got) + ", the options make it " +
                      shape_string(shape));
        Tensor t = Tensor::empty(shape);
        std::copy(a.values.begin(), a.values.end(), t.data<float>());
        require_finite(t, hdf5.string(), name);
        return t;
      },
      options, with_softmax, params);
}

std::optional<ElmoModelFiles> find_elmo_model(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path options = dir / "options.json";
  std::error_code ec;
  if (!fs::is_regular_file(options, ec)) return std::nullopt;
  {
    const ConfigJsonReader json(options);
    int64_t probe = 0;
    try {
      json.integer("/lstm/dim", probe, true);
      json.integer("/char_cnn/max_characters_per_token", probe, true);
    } catch (const Error&) {
      return std::nullopt;  // another tool's options.json
    }
  }
  for (const char* name : {"weights.hdf5", "model.hdf5"})
    if (fs::is_regular_file(dir / name, ec)) return ElmoModelFiles{options, dir / name};
  std::vector<fs::path> found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".hdf5") found.push_back(e.path());
  if (found.size() != 1)
    throw Error(dir.string() + ": an ELMo model (options.json) needs weights.hdf5, model.hdf5 or one *.hdf5; " +
                (found.empty() ? std::string("there is none") : std::to_string(found.size()) + " *.hdf5 files"));
  return ElmoModelFiles{options, found.front()};
}

}  // namespace kglm::nn
